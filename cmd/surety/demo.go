package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/stake"
)

func runDemoCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "demo", "[--rpc-url URL --deployment FILE]", strings.TrimSpace(`
Play a marketplace day on a node of its own, printing the story as it happens: a marketplace
and five agents get DIDs and wallets, bind and stake; agents register cards; the marketplace
finds candidates by capability and reputation and posts three bounties; agents talk in a
group thread; one bounty is accepted, one disputed and resolved by the arbiter, one refunded
after its deadline; audits move reputation; the auditor checks an inclusion proof against the
root anchored on chain; wallets withdraw, and the final balances are read from the chain.

By default it runs on an embedded chain; --rpc-url URL --deployment FILE plays it on a dev chain
such as Anvil (it uses the public dev accounts 1-7 and moves the chain's clock forward).`))
	rpcURL := fs.rpcURL("JSON-RPC URL of a dev chain (default: an embedded chain)")
	deployment := fs.String("deployment", "", "deployment file for the --rpc-url chain")
	dataDir := fs.String("data-dir", "", "the demo node's data directory (default: a temporary one, removed at the end)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if (*rpcURL == "") != (*deployment == "") {
		return usagef("--rpc-url and --deployment go together")
	}
	logger, err := newLogger(e.stderr, "error", "text")
	if err != nil {
		return err
	}
	cfg := node.Config{DataDir: *dataDir, Listen: "127.0.0.1:0", RPC: *rpcURL, DevAccounts: node.DefaultDevAccounts, RPCTimeout: node.DefaultRPCTimeout,
		LogEpoch: time.Second, LogGrace: 3 * time.Second, Logger: logger, DevWallets: true, P2PListen: p2p.DefaultListen}
	if *deployment != "" {
		if cfg.Deployment, err = readDeployment(*deployment); err != nil {
			return startError{err}
		}
	}
	if cfg.DataDir == "" {
		if cfg.DataDir, err = os.MkdirTemp("", "surety-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(cfg.DataDir)
	}
	n, err := node.New(ctx, cfg, nil)
	if err != nil {
		return startError{err}
	}
	defer n.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx) }()
	defer func() {
		stop()
		<-done
	}()
	d := &demo{e: e, began: time.Now(), chain: n.Chain(), rpc: *rpcURL}
	if d.node, err = newNodeClient(n.APIURL()); err != nil {
		return err
	}
	return d.play(ctx)
}

// demo plays the marketplace day against one node.
type demo struct {
	e     *env
	began time.Time
	node  *client.Client
	info  api.Info
	chain chain.Client
	rpc   string // the dev chain's URL, "" on the embedded chain
}

// actor is one party of the story: a DID key, and a dev wallet it is bound to.
type actor struct {
	name   string
	key    *identity.Key
	wallet *ecdsa.PrivateKey
	addr   common.Address
	start  *big.Int // balance before the day
}

func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.e.stdout, "[%5.1fs] %s\n", time.Since(d.began).Seconds(), fmt.Sprintf(format, args...))
}

// day is the story's state as play goes through it.
type day struct {
	names  []string          // the actors, in order of appearance
	actors map[string]*actor // by name
	ids    []uint64          // the three bounties
}

func (d *demo) play(ctx context.Context) error {
	var err error
	if d.info, err = d.node.Info(ctx); err != nil {
		return err
	}
	d.say("node %s up on chain %d (%s), escrow %s", shortDID(d.info.NodeDID), d.info.Chain.ID, d.info.Chain.Kind, d.info.Contracts["BountyEscrow"])
	y := &day{}
	for _, step := range []func(context.Context, *day) error{
		d.meetActors, d.registerCards, d.discover, d.postBounties,
		d.settleInThread, d.settleByRuling, d.settleByRefund, d.auditAndVerify, d.closeTheDay,
	} {
		if err := step(ctx, y); err != nil {
			return err
		}
	}
	return nil
}

// meetActors makes the actors: DIDs, dev wallets bound on chain, stake.
func (d *demo) meetActors(ctx context.Context, y *day) error {
	// 1. DIDs, wallets, bindings, stake.
	y.names = []string{"market", "ada", "bo", "cy", "dee", "eli", "arbiter"}
	stakes := []string{"5", "3", "2", "1", "0.5", "", "2"} // ETH; eli stakes nothing
	y.actors = map[string]*actor{}
	for i, name := range y.names {
		a, err := d.newActor(ctx, name, i+1)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		y.actors[name] = a
		staked := ""
		if stakes[i] != "" {
			if err := d.stake(ctx, a, stakes[i]); err != nil {
				return fmt.Errorf("%s stakes: %w", name, err)
			}
			staked = ", staked " + stakes[i] + " ETH"
		}
		d.say("%-7s %s  wallet %s  bound on chain%s", name, shortDID(a.key.DID.String()), a.addr.Hex(), staked)
	}
	return nil
}

// registerCards registers every actor's card.
func (d *demo) registerCards(ctx context.Context, y *day) error {
	// 2. Cards: the agents', and the marketplace's and arbiter's, whose stake makes their
	// audits count.
	caps := map[string][]string{"market": {"marketplace"}, "ada": {"solidity", "audit"}, "bo": {"solidity", "audit", "fuzzing"},
		"cy": {"audit", "rust"}, "dee": {"solidity"}, "eli": {"solidity", "audit"}, "arbiter": {"arbitration"}}
	for _, name := range y.names {
		a := y.actors[name]
		sc, err := registry.Sign(registry.Card{DID: a.key.DID.String(), Name: name, Description: name + " audits and builds smart contracts",
			Capabilities: caps[name], Wallet: a.addr, Seq: 1, Updated: time.Now().Unix()}, a.key)
		if err != nil {
			return err
		}
		if _, err := d.node.RegisterCard(ctx, sc.JWS); err != nil {
			return fmt.Errorf("%s registers its card: %w", name, err)
		}
	}
	d.say("5 agents, the market and the arbiter registered cards (capabilities: solidity, audit, fuzzing, rust, ...)")
	return nil
}

// discover has the market search for auditors.
func (d *demo) discover(ctx context.Context, y *day) error {
	// 3. Discovery.
	found, err := d.node.SearchAgents(ctx, url.Values{"capability": {"audit"}, "q": {"solidity"}, "limit": {"3"}})
	if err != nil {
		return err
	}
	var picks []string
	for _, a := range found {
		picks = append(picks, fmt.Sprintf("%s (stake %s ETH)", a.Name, formatAmount(a.Stake)))
	}
	d.say("market searches 'audit' + 'solidity': %s", strings.Join(picks, ", "))
	if len(found) < 2 {
		return fmt.Errorf("discovery found %d candidates, want at least 2", len(found))
	}
	return nil
}

// postBounties has the market post three bounties.
func (d *demo) postBounties(ctx context.Context, y *day) error {
	market, arbiter := y.actors["market"], y.actors["arbiter"]
	// 4. Three bounties.
	head, err := d.chain.HeaderByNumber(ctx, nil)
	if err != nil {
		return err
	}
	amounts := []string{"1000000000000000000", "600000000000000000", "400000000000000000"}
	y.ids = make([]uint64, 3)
	for i, amount := range amounts {
		res, err := d.act(ctx, market, 0, "/v1/bounties", api.PostBody{Wallet: market.addr, Amount: amount, Arbiter: arbiter.addr,
			Deadline: head.Time + 3600, ReviewWindow: 600, MinStake: "0", SpecHash: crypto.Keccak256Hash([]byte(fmt.Sprintf("spec %d", i)))})
		if err != nil {
			return fmt.Errorf("post bounty %d: %w", i+1, err)
		}
		y.ids[i] = res.Bounty.ID
		d.say("market posts bounty %d: %s ETH, arbiter %s, deadline in 1h", y.ids[i], formatAmount(amount), arbiter.name)
	}
	return nil
}

// settleInThread runs bounty 1 in its group thread, to acceptance.
func (d *demo) settleInThread(ctx context.Context, y *day) error {
	market, ada, bo := y.actors["market"], y.actors["ada"], y.actors["bo"]
	// 5. The thread of bounty 1, and its settlement: accepted.
	group := fmt.Sprintf("bounty-%d", y.ids[0])
	if err := d.members(ctx, market, group, ada, bo); err != nil {
		return err
	}
	d.say("market opens group thread %s with ada and bo", group)
	steps := []struct {
		by    *actor
		state string
		text  string
		then  func() error
	}{
		{market, "discussion", fmt.Sprintf("bounty %d: audit the vault contract; who takes it?", y.ids[0]), nil},
		{bo, "discussion", "I can start tomorrow.", nil},
		{ada, "discussion", "I can start now; I audited its previous version.", nil},
		{market, "task_assignment", "ada takes it.", func() error { _, err := d.act(ctx, ada, y.ids[0], "claim", nil); return err }},
		{ada, "execution", "done: two medium findings, report hash attached.", func() error {
			_, err := d.act(ctx, ada, y.ids[0], "submit", map[string]any{"resultHash": crypto.Keccak256Hash([]byte("report"))})
			return err
		}},
		{market, "conclusion", "accepted, thank you.", func() error { _, err := d.act(ctx, market, y.ids[0], "accept", nil); return err }},
	}
	for _, st := range steps {
		seq, err := d.post(ctx, st.by, group, st.state, st.text)
		if err != nil {
			return err
		}
		d.say("  #%d %-15s %-6s %s", seq, st.state, st.by.name+":", st.text)
		if st.then != nil {
			if err := st.then(); err != nil {
				return err
			}
		}
	}
	b1, err := d.bounty(ctx, y.ids[0])
	if err != nil {
		return err
	}
	d.say("bounty %d %s: ada is owed %s ETH, the treasury a fee of %s ETH", b1.ID, b1.Status, formatAmount(b1.Payout), formatAmount(b1.Fee))
	return nil
}

// settleByRuling runs bounty 2 to a dispute the arbiter splits.
func (d *demo) settleByRuling(ctx context.Context, y *day) error {
	market, arbiter, bo := y.actors["market"], y.actors["arbiter"], y.actors["bo"]
	// 6. Bounty 2: disputed, resolved with a split.
	for _, s := range []struct {
		by     *actor
		action string
		body   map[string]any
	}{
		{market, "assign", map[string]any{"worker": bo.addr}},
		{bo, "submit", map[string]any{"resultHash": crypto.Keccak256Hash([]byte("bo's report"))}},
		{market, "reject", nil},
		{arbiter, "resolve", map[string]any{"workerBps": 6000}},
	} {
		if _, err := d.act(ctx, s.by, y.ids[1], s.action, s.body); err != nil {
			return fmt.Errorf("bounty %d %s: %w", y.ids[1], s.action, err)
		}
	}
	b2, err := d.bounty(ctx, y.ids[1])
	if err != nil {
		return err
	}
	d.say("bounty %d: bo submitted, market disputed, arbiter split 60/40: %s; bo is owed %s ETH, market %s ETH", b2.ID, b2.Status, formatAmount(b2.Payout), formatAmount(b2.PosterRefund))
	return nil
}

// settleByRefund runs bounty 3 to a refund after its deadline.
func (d *demo) settleByRefund(ctx context.Context, y *day) error {
	market, cy := y.actors["market"], y.actors["cy"]
	// 7. Bounty 3: claimed, never delivered, refunded after its deadline.
	if _, err := d.act(ctx, cy, y.ids[2], "claim", nil); err != nil {
		return err
	}
	if err := d.passTime(ctx, 2*time.Hour); err != nil {
		return err
	}
	if _, err := d.act(ctx, market, y.ids[2], "refund", nil); err != nil {
		return err
	}
	b3, err := d.bounty(ctx, y.ids[2])
	if err != nil {
		return err
	}
	d.say("bounty %d: cy claimed it and went quiet; two hours later (chain clock) it is %s: market is owed %s ETH", b3.ID, b3.Status, formatAmount(b3.PosterRefund))
	return nil
}

// auditAndVerify files audits, checks the log's anchored proof of one, and watches reputation move.
func (d *demo) auditAndVerify(ctx context.Context, y *day) error {
	market, arbiter, ada, bo := y.actors["market"], y.actors["arbiter"], y.actors["ada"], y.actors["bo"]
	// 8. Audits; reputation moves.
	before := map[string]float64{}
	for _, a := range []*actor{ada, bo} {
		r, err := d.reputation(ctx, a)
		if err != nil {
			return err
		}
		before[a.name] = r.Score
	}
	audits := []struct {
		by, of *actor
		bounty uint64
		score  float64
	}{{market, ada, y.ids[0], 0.95}, {arbiter, bo, y.ids[1], 0.55}, {market, bo, y.ids[1], 0.4}}
	var auditEnvelope []byte
	for i, au := range audits {
		env, err := d.envelope(au.by, au.bounty, map[string]any{"kind": reputation.AuditKind, "subject": au.of.key.DID.String(), "score": au.score,
			"evidence": map[string]any{"hash": crypto.Keccak256Hash([]byte(fmt.Sprintf("evidence %d", i))).Hex()}})
		if err != nil {
			return err
		}
		res, err := d.node.SubmitAudit(ctx, env)
		if err != nil {
			return fmt.Errorf("%s audits %s: %w", au.by.name, au.of.name, err)
		}
		if i == 0 {
			auditEnvelope = env
		}
		d.say("%s audits %s on bounty %d: %.2f (backed by the settlement: %v)", au.by.name, au.of.name, au.bounty, au.score, res.Audit.Backed)
	}
	// 9. The log: the audits' epoch closes, its root is anchored; the auditor checks a proof.
	var h wire.Head
	deadline := time.Now().Add(45 * time.Second)
	for h.Size < uint64(len(audits)) || h.AnchorTx == "" {
		if time.Now().After(deadline) {
			return fmt.Errorf("the audit log did not anchor the audits in 45 s (head: size %d, anchor tx %q)", h.Size, h.AnchorTx)
		}
		time.Sleep(200 * time.Millisecond)
		var err error
		if h, err = d.node.LogHead(ctx); err != nil {
			return err
		}
	}
	d.say("audit log: epoch closed, size %d, root %s anchored in tx %s", h.Size, h.Root, h.AnchorTx)
	anchor := common.HexToAddress(d.info.Contracts["RootAnchor"])
	msg, err := verifyLeaf(ctx, d.node, d.chain, anchor, "", merkle.LeafHash(auditEnvelope))
	if err != nil {
		return fmt.Errorf("the auditor's inclusion proof: %w", err)
	}
	d.say("auditor checks its audit of ada: %s", msg)
	tampered := slices.Clone(auditEnvelope)
	tampered[len(tampered)-2] ^= 1 // one byte of the signature
	if _, err := verifyLeaf(ctx, d.node, d.chain, anchor, "", merkle.LeafHash(tampered)); err == nil {
		return errors.New("a tampered audit verified against the anchored root")
	} else {
		d.say("a tampered copy of that audit does not verify: %v", err)
	}

	// Scores follow each audit at once, with the auditors' standing as last computed; the
	// next full recomputation (every few seconds) brings the standings in.
	deadline = time.Now().Add(20 * time.Second)
	for _, a := range []*actor{ada, bo} {
		for {
			r, err := d.reputation(ctx, a)
			if err != nil {
				return err
			}
			if r.Score != before[a.name] || time.Now().After(deadline) {
				d.say("reputation of %s: %.3f -> %.3f (confidence %.3f, %d audits)", a.name, before[a.name], r.Score, r.Confidence, r.Audits)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return nil
}

// closeTheDay withdraws what is owed and prints the balances from the chain.
func (d *demo) closeTheDay(ctx context.Context, y *day) error {
	market, ada, bo := y.actors["market"], y.actors["ada"], y.actors["bo"]
	// 10. Withdrawals (payouts are pushed at settlement; a payout the recipient could not
	// take is credited to withdraw, and the fees accrue to the treasury) and final balances,
	// read from the chain.
	for _, a := range []*actor{market, ada, bo} {
		res, err := d.act(ctx, a, 0, "/v1/withdraw", api.WithdrawBody{Wallet: a.addr})
		var ne *client.Error
		switch {
		case errors.As(err, &ne) && ne.Status == http.StatusConflict:
			d.say("%s withdraws: nothing credited, its payouts were pushed at settlement", a.name)
		case err != nil:
			return fmt.Errorf("%s withdraws: %w", a.name, err)
		default:
			d.say("%s withdraws its credit (tx %s)", a.name, res.TxHash)
		}
	}
	if treasury, err := d.treasury(ctx); err != nil {
		return err
	} else if treasury != nil {
		y.names, y.actors[treasury.name] = append(y.names, treasury.name), treasury
		if err := d.transact(ctx, treasury, d.escrow(), contracts.NewBountyEscrow().PackWithdrawFees(common.Address{}), nil); err != nil {
			return fmt.Errorf("the treasury withdraws the fees: %w", err)
		}
		d.say("treasury withdraws the fees (all but one wei, which keeps the next fee cheap to record)")
	}
	d.say("final balances (read from the chain; changes include gas):")
	for _, name := range y.names {
		a := y.actors[name]
		bal, err := d.chain.BalanceAt(ctx, a.addr, nil)
		if err != nil {
			return err
		}
		delta := new(big.Int).Sub(bal, a.start)
		sign := "+"
		if delta.Sign() < 0 {
			sign, delta = "-", delta.Neg(delta)
		}
		fmt.Fprintf(d.e.stdout, "  balance %-8s %s %s wei (%s ETH, %s%s)\n", name, a.addr.Hex(), bal, formatAmount(bal.String()), sign, formatAmount(delta.String()))
	}
	escrowAddr := common.HexToAddress(d.info.Contracts["BountyEscrow"])
	held, err := d.chain.BalanceAt(ctx, escrowAddr, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.e.stdout, "  balance %-8s %s %s wei (%s ETH still held)\n", "escrow", escrowAddr.Hex(), held, formatAmount(held.String()))
	d.say("the day is over")
	return nil
}

// newActor makes a DID for the party, registers it with the node, and binds it to dev wallet
// i on chain (both keys sign; the node, which holds the dev wallets, sends StakeRegistry.bind).
func (d *demo) newActor(ctx context.Context, name string, i int) (*actor, error) {
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		return nil, err
	}
	if _, err := registerDID(ctx, d.node, k); err != nil {
		return nil, err
	}
	a := &actor{name: name, key: k, wallet: chain.DevKey(i), addr: crypto.PubkeyToAddress(chain.DevKey(i).PublicKey)}
	if a.start, err = d.chain.BalanceAt(ctx, a.addr, nil); err != nil {
		return nil, err
	}
	ans, err := bindWithNode(ctx, d.node, d.info, k, a.wallet)
	if err != nil {
		return nil, err
	}
	if !ans.OnChain {
		return nil, fmt.Errorf("the node did not record %s's binding on chain (it does not hold wallet %s)", name, a.addr.Hex())
	}
	return a, nil
}

// treasury is the escrow's treasury as an actor, when it is one of the dev wallets: it
// withdraws the fees straight from the chain (the node has no route for that).
func (d *demo) treasury(ctx context.Context) (*actor, error) {
	escrowABI := contracts.NewBountyEscrow()
	addr, err := bind.Call(d.escrow(), &bind.CallOpts{Context: ctx}, escrowABI.PackTreasury(), escrowABI.UnpackTreasury)
	if err != nil {
		return nil, fmt.Errorf("read the escrow's treasury: %w", err)
	}
	for i := range 10 {
		if crypto.PubkeyToAddress(chain.DevKey(i).PublicKey) != addr {
			continue
		}
		a := &actor{name: "treasury", wallet: chain.DevKey(i), addr: addr}
		if a.start, err = d.chain.BalanceAt(ctx, addr, nil); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, nil
}

// stake bonds eth ETH for a's agent in StakeRegistry, through the node (POST /v1/stake, as
// `surety stake add` does), and checks that the chain shows it.
func (d *demo) stake(ctx context.Context, a *actor, eth string) error {
	wei, err := parseAmount(eth + "eth")
	if err != nil {
		return err
	}
	res, err := d.act(ctx, a, 0, "/v1/stake", api.StakeBody{Op: string(stake.OpStake), Wallet: a.addr, Amount: wei.String()})
	if err != nil {
		return err
	}
	if res.Stake == nil || res.Stake.Staked != wei.String() {
		return fmt.Errorf("the node staked %+v, want %s wei", res.Stake, wei)
	}
	return nil
}

func (d *demo) escrow() *bind.BoundContract {
	return contracts.NewBountyEscrow().Instance(d.chain, common.HexToAddress(d.info.Contracts["BountyEscrow"]))
}

// transact sends a transaction from a's wallet to contract, straight to the chain, and waits
// for it.
func (d *demo) transact(ctx context.Context, a *actor, contract *bind.BoundContract, data []byte, value *big.Int) error {
	opts := bind.NewKeyedTransactor(a.wallet, new(big.Int).SetUint64(d.info.Chain.ID))
	opts.Context, opts.Value = ctx, value
	tx, err := bind.Transact(contract, opts, data)
	if err != nil {
		return err
	}
	r, err := chain.WaitMined(ctx, d.chain, tx.Hash())
	if err != nil {
		return err
	}
	if r.Status != 1 {
		return fmt.Errorf("transaction %s reverted", tx.Hash().Hex())
	}
	return nil
}

// envelope signs body for the node as a, naming bounty id when not zero.
func (d *demo) envelope(a *actor, id uint64, body any) ([]byte, error) {
	s, err := signForNode(a.key, d.info, id, body)
	return []byte(s), err
}

// act sends a bounty request signed by a: path is a route, or an action on bounty id.
func (d *demo) act(ctx context.Context, a *actor, id uint64, path string, body any) (*txAnswer, error) {
	if !strings.HasPrefix(path, "/") {
		m, _ := body.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		m["wallet"] = a.addr
		body, path = m, fmt.Sprintf("/v1/bounties/%d/%s", id, path)
	}
	env, err := d.envelope(a, id, body)
	if err != nil {
		return nil, err
	}
	var res txAnswer
	if err := d.node.Write(ctx, path, env, "", &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (d *demo) bounty(ctx context.Context, id uint64) (*wire.Bounty, error) {
	return d.node.Bounty(ctx, strconv.FormatUint(id, 10))
}

func (d *demo) reputation(ctx context.Context, a *actor) (*wire.Reputation, error) {
	return d.node.Reputation(ctx, a.key.DID.String())
}

// members makes group with creator and members.
func (d *demo) members(ctx context.Context, creator *actor, group string, members ...*actor) error {
	var dids []string
	for _, m := range members {
		dids = append(dids, m.key.DID.String())
	}
	env, err := signGroupEnvelope(creator.key, group, map[string]any{"body": map[string]any{"kind": groups.MembersKind, "members": dids}})
	if err != nil {
		return err
	}
	_, err = d.node.SetGroupMembers(ctx, group, env)
	return err
}

// post signs a text message by a into group and returns its seq.
func (d *demo) post(ctx context.Context, a *actor, group, state, text string) (int64, error) {
	env, err := signGroupEnvelope(a.key, group, map[string]any{"state": state, "body": map[string]any{"text": text}})
	if err != nil {
		return 0, err
	}
	p, err := d.node.PostToGroup(ctx, group, env)
	if err != nil {
		return 0, fmt.Errorf("%s posts in %s: %w", a.name, group, err)
	}
	if p.Envelope == nil {
		return 0, fmt.Errorf("%s's post in %s was not stored", a.name, group)
	}
	return p.Envelope.Seq, nil
}

// passTime moves the chain's clock forward: the embedded chain directly, a dev chain with
// evm_increaseTime.
func (d *demo) passTime(ctx context.Context, by time.Duration) error {
	if em, ok := d.chain.(*chain.Embedded); ok {
		return em.AdvanceTime(by)
	}
	c, err := rpc.DialContext(ctx, d.rpc)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.CallContext(ctx, nil, "evm_increaseTime", hexutil.Uint64(by/time.Second)); err != nil {
		return fmt.Errorf("move the chain's clock (a dev chain is needed): %w", err)
	}
	return c.CallContext(ctx, nil, "evm_mine")
}
