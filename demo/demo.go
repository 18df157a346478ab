package demo

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/units"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Config is where the day is played and told.
type Config struct {
	// Out receives the story, one line per event, then the final balances.
	Out io.Writer
	// RPC is the JSON-RPC URL of a dev chain such as Anvil, with Deployment its contracts;
	// the demo uses the public dev accounts 1-7 and moves the chain's clock forward. Empty:
	// the node runs an embedded chain.
	RPC        string
	Deployment *contracts.Deployment
	// DataDir is the node's data directory; empty: a temporary one, removed at the end.
	DataDir string
	// Logger is the node's logger (nil: none).
	Logger *slog.Logger
	// Listen is the node's API address; empty: 127.0.0.1 on a free port.
	Listen string
	// Keep keeps the node serving once the day is over, until ctx ends (Ctrl-C for
	// `surety demo --keep`): Run prints the explorer's URL, where the day can be browsed.
	Keep bool
}

// StartError is a failure to start the demo's node (an unreachable chain, a deployment that
// does not match it): nothing was played.
type StartError struct{ Err error }

// Error is the node's error.
func (e *StartError) Error() string { return e.Err.Error() }

// Unwrap returns the node's error.
func (e *StartError) Unwrap() error { return e.Err }

// Run starts a node as cfg says, plays the day against it through its API, and closes the
// node. A node that does not start is a *StartError.
func Run(ctx context.Context, cfg Config) error {
	if (cfg.RPC == "") != (cfg.Deployment == nil) {
		return errors.New("demo: a dev chain's RPC URL and its deployment go together")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	listen := cfg.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ncfg := node.Config{DataDir: cfg.DataDir, Listen: listen, RPC: cfg.RPC, Deployment: cfg.Deployment,
		DevAccounts: node.DefaultDevAccounts, RPCTimeout: node.DefaultRPCTimeout, LogEpoch: logEpoch, LogGrace: logGrace,
		Logger: logger, DevWallets: true, P2PListen: p2p.DefaultListen}
	if ncfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "surety-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		ncfg.DataDir = dir
	}
	n, err := node.New(ctx, ncfg, nil)
	if err != nil {
		return &StartError{err}
	}
	defer n.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx) }()
	defer func() {
		stop()
		<-done
	}()
	c, err := client.New(n.APIURL())
	if err != nil {
		return err
	}
	d := &demo{out: cfg.Out, began: time.Now(), node: c, chain: n.Chain(), rpc: cfg.RPC}
	if err := d.play(ctx); err != nil || !cfg.Keep {
		return err
	}
	// The day's data stays to browse: the node serves it until ctx ends.
	fmt.Fprintf(cfg.Out, "explorer: %s\n", n.ExplorerURL())
	fmt.Fprintf(cfg.Out, "the node keeps serving the day (API %s); Ctrl-C stops it\n", n.APIURL())
	select {
	case <-ctx.Done():
		return nil
	case err := <-done:
		done <- err // for the deferred stop
		if err == nil {
			err = errors.New("the demo's node stopped")
		}
		return err
	}
}

// demo plays the marketplace day against one node.
type demo struct {
	out   io.Writer
	began time.Time
	node  *client.Client
	info  wire.Info
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
	fmt.Fprintf(d.out, "[%5.1fs] %s\n", time.Since(d.began).Seconds(), fmt.Sprintf(format, args...))
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
		env, err := d.envelope(market, 0, wire.PostBody{Wallet: market.addr, Amount: amount, Arbiter: arbiter.addr,
			Deadline: head.Time + 3600, ReviewWindow: 600, MinStake: "0", SpecHash: crypto.Keccak256Hash([]byte(fmt.Sprintf("spec %d", i)))})
		if err != nil {
			return err
		}
		res, err := d.node.PostBounty(ctx, env, identity.NewNonce())
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
	id := y.ids[0]
	// 5. The thread of bounty 1, and its settlement: accepted.
	group := fmt.Sprintf("bounty-%d", id)
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
		{market, "discussion", fmt.Sprintf("bounty %d: audit the vault contract; who takes it?", id), nil},
		{bo, "discussion", "I can start tomorrow.", nil},
		{ada, "discussion", "I can start now; I audited its previous version.", nil},
		{market, "task_assignment", "ada takes it.", func() error { return d.act(ctx, ada, id, wire.ActionClaim, wire.ActionBody{}) }},
		{ada, "execution", "done: two medium findings, report hash attached.", func() error {
			return d.act(ctx, ada, id, wire.ActionSubmit, wire.ActionBody{ResultHash: crypto.Keccak256Hash([]byte("report"))})
		}},
		{market, "conclusion", "accepted, thank you.", func() error { return d.act(ctx, market, id, wire.ActionAccept, wire.ActionBody{}) }},
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
	b1, err := d.bounty(ctx, id)
	if err != nil {
		return err
	}
	d.say("bounty %d %s: ada is owed %s ETH, the treasury a fee of %s ETH", b1.ID, b1.Status, formatAmount(b1.Payout), formatAmount(b1.Fee))
	return nil
}

// settleByRuling runs bounty 2 to a dispute the arbiter splits.
func (d *demo) settleByRuling(ctx context.Context, y *day) error {
	market, arbiter, bo := y.actors["market"], y.actors["arbiter"], y.actors["bo"]
	id := y.ids[1]
	// 6. Bounty 2: disputed, resolved with a split.
	for _, s := range []struct {
		by     *actor
		action wire.Action
		body   wire.ActionBody
	}{
		{market, wire.ActionAssign, wire.ActionBody{Worker: bo.addr}},
		{bo, wire.ActionSubmit, wire.ActionBody{ResultHash: crypto.Keccak256Hash([]byte("bo's report"))}},
		{market, wire.ActionReject, wire.ActionBody{}},
		{arbiter, wire.ActionResolve, wire.ActionBody{WorkerBps: 6000}},
	} {
		if err := d.act(ctx, s.by, id, s.action, s.body); err != nil {
			return fmt.Errorf("bounty %d %s: %w", id, s.action, err)
		}
	}
	b2, err := d.bounty(ctx, id)
	if err != nil {
		return err
	}
	d.say("bounty %d: bo submitted, market disputed, arbiter split 60/40: %s; bo is owed %s ETH, market %s ETH", b2.ID, b2.Status, formatAmount(b2.Payout), formatAmount(b2.PosterRefund))
	return nil
}

// settleByRefund runs bounty 3 to a refund after its deadline.
func (d *demo) settleByRefund(ctx context.Context, y *day) error {
	market, cy := y.actors["market"], y.actors["cy"]
	id := y.ids[2]
	// 7. Bounty 3: claimed, never delivered, refunded after its deadline.
	if err := d.act(ctx, cy, id, wire.ActionClaim, wire.ActionBody{}); err != nil {
		return err
	}
	if err := d.passTime(ctx, 2*time.Hour); err != nil {
		return err
	}
	if err := d.act(ctx, market, id, wire.ActionRefund, wire.ActionBody{}); err != nil {
		return err
	}
	b3, err := d.bounty(ctx, id)
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
	deadline := time.Now().Add(anchorWait)
	for h.Size < uint64(len(audits)) || h.AnchorTx == "" {
		if time.Now().After(deadline) {
			return fmt.Errorf("the audit log did not anchor the audits in %s (head: size %d, anchor tx %q)", anchorWait, h.Size, h.AnchorTx)
		}
		time.Sleep(poll)
		var err error
		if h, err = d.node.LogHead(ctx); err != nil {
			return err
		}
	}
	d.say("audit log: epoch closed, size %d, root %s anchored in tx %s", h.Size, h.Root, h.AnchorTx)
	anchor := common.HexToAddress(d.info.Contracts["RootAnchor"])
	msg, err := d.verifyLeaf(ctx, anchor, merkle.LeafHash(auditEnvelope))
	if err != nil {
		return fmt.Errorf("the auditor's inclusion proof: %w", err)
	}
	d.say("auditor checks its audit of ada: %s", msg)
	tampered := slices.Clone(auditEnvelope)
	tampered[len(tampered)-2] ^= 1 // one byte of the signature
	if _, err := d.verifyLeaf(ctx, anchor, merkle.LeafHash(tampered)); err == nil {
		return errors.New("a tampered audit verified against the anchored root")
	} else {
		d.say("a tampered copy of that audit does not verify: %v", err)
	}

	// Scores follow each audit at once, with the auditors' standing as last computed; the
	// next full recomputation (every few seconds) brings the standings in.
	deadline = time.Now().Add(scoreWait)
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
			time.Sleep(poll)
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
		env, err := d.envelope(a, 0, wire.WithdrawBody{Wallet: a.addr})
		if err != nil {
			return err
		}
		res, err := d.node.Withdraw(ctx, env, identity.NewNonce())
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
		fmt.Fprintf(d.out, "  balance %-8s %s %s wei (%s ETH, %s%s)\n", name, a.addr.Hex(), bal, formatAmount(bal.String()), sign, formatAmount(delta.String()))
	}
	escrowAddr := common.HexToAddress(d.info.Contracts["BountyEscrow"])
	held, err := d.chain.BalanceAt(ctx, escrowAddr, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.out, "  balance %-8s %s %s wei (%s ETH still held)\n", "escrow", escrowAddr.Hex(), held, formatAmount(held.String()))
	d.say("the day is over")
	return nil
}

func (d *demo) bounty(ctx context.Context, id uint64) (*wire.Bounty, error) {
	return d.node.Bounty(ctx, strconv.FormatUint(id, 10))
}

func (d *demo) reputation(ctx context.Context, a *actor) (*wire.Reputation, error) {
	return d.node.Reputation(ctx, a.key.DID.String())
}

// formatAmount shows a wei amount in ETH, trimmed.
func formatAmount(wei string) string {
	v, ok := new(big.Int).SetString(wei, 10)
	if !ok {
		return wei
	}
	return units.Ether.Format(v)
}

// shortDID abbreviates a DID for a column: did:key:z6Mk…last6.
func shortDID(did string) string {
	if len(did) <= 24 {
		return did
	}
	return did[:12] + "…" + did[len(did)-6:]
}
