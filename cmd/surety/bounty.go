package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/units"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

func runBountyCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{
		"post":     runBountyPost,
		"list":     runBountyList,
		"show":     runBountyShow,
		"withdraw": runBountyWithdraw,
	}
	for name := range actionNames {
		sub[name] = func(ctx context.Context, e *env, args []string) error { return runBountyAction(ctx, e, name, args) }
	}
	// Competing workers and milestones: Surety jobs (ERC-8183 JobEscrow with SuretyHook),
	// opened and moved from here too; their ids are job ids.
	sub["compete"] = runBountyCompete
	sub["milestones"] = runJobMilestones
	for _, name := range []string{"join", "pick", "approve"} {
		sub[name] = func(ctx context.Context, e *env, args []string) error { return runJobWrite(ctx, e, name, args) }
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		defer fmt.Fprint(e.stdout, bountyJobsNote)
	}
	return runSubcommand(ctx, e, "bounty", "post | list | show ID | claim|assign|unclaim|submit|accept|reject|dispute|resolve|release|refund|cancel ID | withdraw | compete | milestones | join|pick|approve JOB", sub, args)
}

// bountyJobsNote says where competing workers and milestones live.
const bountyJobsNote = `
A bounty (post) takes one worker and pays once. Competing workers (several submit; you pick
one or split the budget among several) and milestones (a budget in parts, each approved and
paid on its own) are Surety jobs, ERC-8183 jobs on JobEscrow with Surety's hook: 'surety
bounty compete' opens and funds one ('--workers 3 --max-winners 2'), 'surety bounty
milestones --parts 1ether,1ether,2ether --fund' a chain of parts; workers 'surety bounty join
JOB' and 'surety job submit JOB', the client 'surety bounty pick JOB --winner ADDR:BPS' or
'approve JOB'. Every other move of a job is under 'surety job'.
`

// runBountyCompete is surety bounty compete: one Surety job several workers compete for,
// created, planned and funded from the client's own wallet in one command.
func runBountyCompete(ctx context.Context, e *env, args []string) error {
	f := newJobFlags(e, "bounty compete", "[wallet flags] --token ADDR --amount 10ether --arbiter ADDR --workers 3 [--max-winners 2] [--min-stake 0.5ether]",
		`Open a bounty several workers compete for: one Surety job (an ERC-8183 job on JobEscrow whose
hook and evaluator is SuretyHook), created, planned and funded at once (the token approved
first). Workers join it ('surety bounty join JOB') and submit ('surety job submit JOB'); you
pick one or split the budget among several ('surety bounty pick JOB --winner ADDR:BPS',
repeated); losers get nothing and lose no stake. Silence past the review window pays the
first submitters evenly; a rejection of them all is a dispute the arbiter decides.`)
	if err := f.fs.parse(args); err != nil {
		return err
	}
	if *f.workers < 2 {
		return usagef("--workers: a competition takes 2 to 20 workers (one worker: 'surety job create --surety')")
	}
	token, err := addrFlag("compete", "token", *f.token, true)
	if err != nil {
		return err
	}
	amount, err := parseAmount(*f.amount)
	if err != nil || amount.Sign() == 0 {
		return usagef("--amount: give the budget, e.g. 10ether or base units")
	}
	if _, err := f.plan(); err != nil { // the flags' own mistakes, before anything is sent
		return err
	}
	ids, rc, node, err := openSuretyJobs(ctx, e, f, "bounty", []*big.Int{amount}, token, true)
	if err != nil {
		return err
	}
	if *f.asJSON {
		j, err := node.Job(ctx, ids[0])
		if err != nil {
			return err
		}
		return printJSON(e, j)
	}
	if *f.quiet {
		fmt.Fprintln(e.stdout, ids[0])
		return nil
	}
	fmt.Fprintf(e.stdout, "job %d: funded, open to %d competing workers, at most %d paid (tx %s)\n", ids[0], *f.workers, *f.winnersMax, rc.TxHash.Hex())
	return nil
}

var actionNames = map[string]string{
	"claim": "take an open bounty as its worker", "assign": "pick the worker of your open bounty (--worker)",
	"submit": "submit the result (--result)", "accept": "accept the submission: the worker is paid",
	"reject": "reject the submission: the arbiter decides", "dispute": "dispute the submission: the arbiter decides (nothing can be disputed before a submission)",
	"resolve": "as the arbiter, split a disputed bounty (--worker-bps) and slash the worker's locked stake (--slash)", "release": "as the worker, take the payout after a silent review window",
	"refund": "get the funds of a bounty back after its deadline", "cancel": "take back your unassigned bounty",
	"unclaim": "send away the worker of your bounty without a minimum stake that has not submitted within " + shortDuration(escrow.ClaimWindow) + " of taking it: the bounty is open again, and for " +
		shortDuration(escrow.ClaimWindow) + " only you may assign or cancel it (not after a submission; a claim on a bounty with a minimum stake holds until the deadline)",
}

// shortDuration writes d as people do: 1h, not 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// signer is who signs a bounty request: a DID key and the wallet it acts from.
type signer struct {
	key     *identity.Key
	wallet  common.Address
	node    *client.Client
	info    api.Info
	asJSON  bool
	nodeURL string
	idemKey string // --idempotency-key; empty: one per command, journalled
}

func bountyFlags(e *env, name, synopsis, about string) (*flags, *string, *string, *string, *bool) {
	fs, node, key, wallet, asJSON := signerFlags(e, "bounty "+name, synopsis, about+`

With your own wallet (--keystore, --private-key, --signer or --dev-account) the CLI signs and
sends the escrow call itself, to --rpc-url or through the node's JSON-RPC relay, shows it as it
goes (sent, mined, indexed by the node), and prints the node's view; --key is then needed
only to name the claiming agent. With --wallet ADDR the node sends from a wallet it holds.`)
	fs.own = fs.ownWallet()
	fs.rpc = fs.rpcURL("the chain's JSON-RPC URL, to send from your own wallet (default: through the node)")
	return fs, node, key, wallet, asJSON
}

// ownOrNode says which wallet a write acts from: the user's own (true), or one the node
// holds, named by --wallet (false); naming both, or neither, is a usage error.
func ownOrNode(fs *flags, wallet string) (bool, error) {
	switch {
	case fs.own.given() && wallet != "":
		return false, usagef("give your own wallet or the node's --wallet, not both")
	case fs.own.given():
		return true, nil
	case wallet == "":
		return false, usagef("name the wallet to act from: your own (--keystore FILE, --private-key, --signer URL, --dev-account N) or one the node holds (--wallet ADDR)")
	}
	return false, nil
}

// signerFlags are the flags of a command that signs a request with a DID key and acts from
// a wallet the node holds: --node, --key, --wallet, --json.
func signerFlags(e *env, name, synopsis, about string) (*flags, *string, *string, *string, *bool) {
	fs := newFlags(e, name, synopsis, about)
	node := fs.nodeURL()
	key := fs.String("key", "", "your DID's private key file (from 'surety did new')")
	wallet := fs.String("wallet", "", "the wallet (bound to your DID) to act from")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.timeout = fs.Duration("timeout", defaultWriteTimeout, "how long to wait for the node's answer to a write (on a slow chain a transaction and its confirmations take a while; the same command run again resumes the request)")
	fs.idemKey = fs.String("idempotency-key", "", "the request's Idempotency-Key (for scripts: the same key never acts twice); default: one per command, journalled until the node answers, so a re-run after a crash resumes it")
	return fs, node, key, wallet, asJSON
}

func newSigner(ctx context.Context, fs *flags, nodeURL, keyFile, wallet string, asJSON bool) (*signer, error) {
	if keyFile == "" || wallet == "" {
		return nil, usagef("--key and --wallet are required")
	}
	if !common.IsHexAddress(wallet) {
		return nil, usagef("--wallet %q is not an address", wallet)
	}
	k, err := readKeyFile(keyFile)
	if err != nil {
		return nil, err
	}
	c, info, err := dialNode(ctx, nodeURL)
	if err != nil {
		return nil, err
	}
	if fs.timeout != nil {
		c = c.WithTimeout(*fs.timeout)
	}
	s := &signer{key: k, wallet: common.HexToAddress(wallet), node: c, info: info, asJSON: asJSON, nodeURL: nodeURL}
	if fs.idemKey != nil {
		s.idemKey = *fs.idemKey
	}
	return s, nil
}

// send signs body as an envelope (naming bounty id when not zero) and posts it to path, with
// an Idempotency-Key; a request that failed on the way is retried once, identically. The key
// and body are journalled until the node answers: the same command run again after a crash
// resends that request under that key (the node answers with the first result), not a new
// one.
// txAnswer is the node's answer to a write: the transaction and the bounty after it, or for a
// stake op the stake after it, or for a key change (did revoke, did rotate) the stake and the
// DID's key status after it.
type txAnswer struct {
	wire.BountyResult
	Stake *wire.Holding  `json:"stake,omitempty"`
	Key   *wire.KeyState `json:"key,omitempty"`
}

func (s *signer) send(ctx context.Context, e *env, path string, id uint64, body any, what string) (*txAnswer, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	key := s.idemKey
	if key == "" {
		key = identity.NewNonce()
	}
	j, name := openJournal(e), journalName(s.idemKey, s.nodeURL, e.args)
	if j != nil {
		prev, err := j.load(name)
		if err != nil {
			return nil, err
		}
		if prev != nil && prev.Path == path {
			fmt.Fprintf(e.stderr, "%s: resuming the unanswered request of %s (Idempotency-Key %s)\n", what, prev.Created.Format(time.RFC3339), prev.Key)
			key, raw = prev.Key, prev.Body
		} else if err := j.save(name, &journalEntry{Key: key, Path: path, Body: raw, Command: e.args, Created: time.Now().UTC()}); err != nil {
			return nil, err
		}
	}
	env, err := signForNode(s.key, s.info, id, json.RawMessage(raw))
	if err != nil {
		return nil, err
	}
	e.progressf("%s: sending, waiting for the receipt…", what)
	var res txAnswer
	followed := false
	follow := func(op *api.Operation) {
		if !followed {
			e.progressf("%s: not done yet; the node carries it on as operation %s", what, op.ID)
			followed = true
		}
		printOperation(e, what, op)
	}
	err = s.node.WriteAsync(ctx, path, []byte(env), key, asyncWait, follow, &res)
	var ne *client.Error
	if err != nil && !errors.As(err, &ne) {
		e.progressf("%s: %v; retrying the same request", what, err)
		err = s.node.WriteAsync(ctx, path, []byte(env), key, asyncWait, follow, &res)
	}
	if j != nil && (err == nil || errors.As(err, &ne) && ne.Settled()) {
		j.done(name) // answered for good, one way or the other: the next run is a new request
	}
	if err != nil {
		return nil, err
	}
	e.progressDone("%s: mined in block %d (tx %s, %d gas)", what, res.Block, res.TxHash, res.GasUsed)
	return &res, nil
}

// asyncWait is how long the node may take to answer a write before it answers 202 and the
// CLI follows the operation instead (a fast chain answers well within it).
const asyncWait = 10 * time.Second

// printOperation shows how far a write the node carries on got.
func printOperation(e *env, what string, op *api.Operation) {
	switch op.State {
	case api.OpSent:
		e.progressf("%s: sent %s", what, op.TxHash)
	case api.OpMined:
		if c := op.Confirmations; c != nil {
			e.progressf("%s: mined %s in block %d, %d/%d confirmations", what, op.TxHash, op.Block, c.Have, c.Want)
		} else {
			e.progressf("%s: mined %s in block %d; waiting for the node's index", what, op.TxHash, op.Block)
		}
	}
}

// signForNode signs body as an envelope to the node described by info: its aud is the node's
// DID and its chain_id the node's chain, so it acts at that node alone; it names its bounty
// id when id is not zero.
func signForNode(k *identity.Key, info api.Info, id uint64, body any) (string, error) {
	return identity.SignRequest(k, audienceOf(info), id, body, time.Now(), 5*time.Minute)
}

// audienceOf is the node described by info as an envelope's audience.
func audienceOf(info api.Info) identity.Audience {
	return identity.Audience{Node: info.NodeDID, ChainID: info.Chain.ID, Escrow: info.Contracts["BountyEscrow"]}
}

func (s *signer) print(e *env, res *wire.BountyResult) error {
	if s.asJSON {
		return printJSON(e, res)
	}
	if res.Bounty != nil {
		printBounty(e, res.Bounty)
	}
	return nil
}

func printBounty(e *env, b *wire.Bounty) {
	fmt.Fprintf(e.stdout, "bounty %d: %s\n  amount  %s %s\n  poster  %s\n", b.ID, b.Status, formatAmount(b.Amount), tokenName(b.Token), b.Poster.Hex())
	if b.Worker != (common.Address{}) {
		fmt.Fprintf(e.stdout, "  worker  %s\n", b.Worker.Hex())
	}
	fmt.Fprintf(e.stdout, "  arbiter %s\n  deadline %s, review window %s\n", b.Arbiter.Hex(),
		time.Unix(int64(b.Deadline), 0).UTC().Format(time.RFC3339), time.Duration(b.ReviewWindow)*time.Second)
	if b.MinStake != "" && b.MinStake != "0" {
		fmt.Fprintf(e.stdout, "  min stake %s: a claim locks it until the bounty ends; the arbiter's ruling may slash it to the poster\n", formatAmount(b.MinStake))
	} else {
		fmt.Fprintf(e.stdout, "  min stake none: a worker that has not submitted within %s of taking it may be sent away by the poster (unclaim)\n", shortDuration(escrow.ClaimWindow))
	}
	if text, ok := specText(b); ok {
		fmt.Fprintf(e.stdout, "  task (matches specHash %s):\n", b.SpecHash.Hex())
		for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			fmt.Fprintf(e.stdout, "    %s\n", l)
		}
	} else {
		fmt.Fprintf(e.stdout, "  task    %s\n", text)
	}
	if b.Payout != "0" || b.PosterRefund != "0" {
		fmt.Fprintf(e.stdout, "  paid    worker %s, poster %s, fee %s (%s)\n", formatAmount(b.Payout), formatAmount(b.PosterRefund), formatAmount(b.Fee), tokenName(b.Token))
	}
	for _, h := range b.History {
		fmt.Fprintf(e.stdout, "  block %-6d %-10s tx %s\n", h.Block, h.Name, h.TxHash)
	}
}

func tokenName(t common.Address) string {
	if t == (common.Address{}) {
		return "ETH"
	}
	return "of token " + t.Hex()
}

// formatAmount shows a base-unit amount with 18 decimals, trimmed.
func formatAmount(wei string) string {
	v, ok := new(big.Int).SetString(wei, 10)
	if !ok {
		return wei
	}
	return units.Ether.Format(v)
}

// positiveAmount reads the --amount flag (see parseAmount), which must be above zero; a
// mistake is a usage error.
func positiveAmount(s string) (*big.Int, error) {
	amt, err := parseAmount(s)
	if err != nil {
		return nil, usagef("--amount: %v", err)
	}
	if amt.Sign() == 0 {
		return nil, usagef("--amount: give a positive amount")
	}
	return amt, nil
}

// amountUnits are the units an amount may name, as cast writes them ("1ether", "20gwei",
// "1000wei"; "eth" is kept from earlier versions), longest first so that "gwei" is not read
// as "wei".
var amountUnits = []struct {
	suffix string
	exp    int64
}{{"ether", 18}, {"gwei", 9}, {"eth", 18}, {"wei", 0}}

// parseAmount reads "1.5ether", "20gwei", "1000wei" (a space before the unit is fine) or a
// plain number of base units.
func parseAmount(raw string) (*big.Int, error) {
	s := strings.TrimSpace(strings.ToLower(raw))
	unit := big.NewInt(1)
	for _, u := range amountUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, unit = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), new(big.Int).Exp(big.NewInt(10), big.NewInt(u.exp), nil)
			break
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 || strings.ContainsAny(s, "/eE") || len(s) > maxAmountDigits {
		return nil, fmt.Errorf("amount %q: use e.g. 1.5ether, 20gwei or 1000 (wei)", raw)
	}
	r.Mul(r, new(big.Rat).SetInt(unit))
	if !r.IsInt() {
		return nil, fmt.Errorf("amount %q is finer than one base unit", raw)
	}
	return r.Num(), nil
}

// maxAmountDigits bounds an amount's text: 2^256 has 78 digits.
const maxAmountDigits = 100

func runBountyPost(ctx context.Context, e *env, args []string) error {
	fs, node, key, wallet, asJSON := bountyFlags(e, "post", "--key KEYFILE --wallet ADDR --amount 1ether --arbiter ADDR [flags]",
		"Post a bounty: the amount is locked in the escrow until it is settled.\n\n"+
			"With no --min-stake (the default) anyone may claim it, staked or not; a claim that brings no\n"+
			"submission within "+shortDuration(escrow.ClaimWindow)+" is yours to send away ('surety bounty unclaim ID'), so nobody can hold the\n"+
			"funds until the deadline by claiming and doing nothing. With --min-stake, a claim locks that\n"+
			"much of the claimer's stake and holds until the deadline.")
	amount := fs.String("amount", "", "amount: 1.5ether, 20gwei or base units (for a token, its base units)")
	token := fs.String("token", "", "ERC-20 to pay in (default ETH); the node approves the escrow")
	arbiter := fs.String("arbiter", "", "who decides disputes (never you or the worker: the escrow refuses that); it may slash up to --min-stake of the claimer's stake")
	deadline := fs.Duration("deadline", 24*time.Hour, "time from now by which the result must be submitted")
	review := fs.Duration("review", time.Hour, "how long you have to accept or reject a submission")
	minStake := fs.String("min-stake", "0", "stake a claim locks from the claiming agent until the bounty ends (a dispute ruling may slash it to you); "+
		"with none (the default) anyone may claim, and a claim without a submission holds the bounty only "+shortDuration(escrow.ClaimWindow)+": then 'surety bounty unclaim' takes it back")
	spec := fs.String("spec", "", "the task (text, or @FILE): the contract records its keccak256, the node stores and serves the text")
	salt := fs.String("salt", "", "makes the bounty id (its keccak256): run again with the same salt, the post is refused instead of made twice (default: one per request)")
	quiet := fs.Bool("quiet", false, "print only the bounty id (for scripts: ID=$(surety bounty post ... --quiet))")
	if err := fs.parse(args); err != nil {
		return err
	}
	amt, err := positiveAmount(*amount)
	if err != nil {
		return err
	}
	stake, err := parseAmount(*minStake)
	if err != nil {
		return usagef("--min-stake: %v", err)
	}
	if !common.IsHexAddress(*arbiter) {
		return usagef("--arbiter %q is not an address", *arbiter)
	}
	if *token != "" && !common.IsHexAddress(*token) {
		return usagef("--token %q is not an address", *token)
	}
	specText := []byte(*spec)
	if strings.HasPrefix(*spec, "@") {
		if specText, err = os.ReadFile(strings.TrimPrefix(*spec, "@")); err != nil {
			return err
		}
	}
	own, err := ownOrNode(fs, *wallet)
	if err != nil {
		return err
	}
	post := escrow.PostRequest{Token: common.HexToAddress(*token), Amount: amt, Arbiter: common.HexToAddress(*arbiter),
		Deadline: uint64(time.Now().Add(*deadline).Unix()), ReviewWindow: uint32(review.Seconds()), MinStake: stake, SpecHash: crypto.Keccak256Hash(specText)}
	if *salt != "" {
		post.Salt = crypto.Keccak256Hash([]byte(*salt))
	}
	if own {
		return runOwnPost(ctx, e, fs, *node, post, specText, *quiet, *asJSON)
	}
	s, err := newSigner(ctx, fs, *node, *key, *wallet, *asJSON)
	if err != nil {
		return err
	}
	body := api.PostBody{Wallet: s.wallet, Token: common.HexToAddress(*token), Amount: amt.String(), Arbiter: common.HexToAddress(*arbiter),
		Deadline: uint64(time.Now().Add(*deadline).Unix()), ReviewWindow: uint32(review.Seconds()), MinStake: stake.String(),
		SpecHash: crypto.Keccak256Hash(specText)}
	switch {
	case len(specText) == 0:
	case len(specText) > escrow.MaxSpecBytes || !utf8.Valid(specText):
		fmt.Fprintf(e.stderr, "note: the spec is not UTF-8 text of at most %d bytes: only its hash is posted; send the text to workers yourself\n", escrow.MaxSpecBytes)
	default:
		body.Spec = string(specText)
	}
	if *salt != "" {
		body.Salt = crypto.Keccak256Hash([]byte(*salt))
	}
	res, err := s.send(ctx, e, "/v1/bounties", 0, body, "post")
	if err != nil {
		return err
	}
	if *quiet && !*asJSON && res.Bounty != nil {
		fmt.Fprintln(e.stdout, res.Bounty.ID)
		return nil
	}
	return s.print(e, &res.BountyResult)
}

func runBountyAction(ctx context.Context, e *env, action string, args []string) error {
	about := actionNames[action]
	fs, node, key, wallet, asJSON := bountyFlags(e, action, "--key KEYFILE --wallet ADDR [flags] ID", strings.ToUpper(about[:1])+about[1:]+".")
	result := fs.String("result", "", "submit: the result (text, or @FILE); its keccak256 is recorded")
	reason := fs.String("reason", "", "reject/dispute: why (its keccak256 is recorded)")
	workerBps := fs.Uint("worker-bps", 0, "resolve: the worker's share in basis points (0-10000)")
	slash := fs.String("slash", "", "resolve: take this much of the worker's locked stake to the poster (e.g. 0.5ether; at most the bounty's min stake)")
	worker := fs.String("worker", "", "assign: the worker's wallet")
	agent := fs.String("agent", "", "claim: your agent's DID, for bounties that require stake (default: your DID)")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the bounty ID (see 'surety bounty %s -h')", action)
	}
	id, err := strconv.ParseUint(pos[0], 10, 64)
	if err != nil || id == 0 {
		return usagef("bounty ID %q must be a positive integer", pos[0])
	}
	if *workerBps > 10_000 {
		return usagef("--worker-bps must be at most 10000")
	}
	var slashWei string
	if *slash != "" {
		v, err := parseAmount(*slash)
		if err != nil {
			return usagef("--slash: %v", err)
		}
		slashWei = v.String()
	}
	if action == "assign" && !common.IsHexAddress(*worker) {
		return usagef("assign needs --worker ADDR")
	}
	own, err := ownOrNode(fs, *wallet)
	if err != nil {
		return err
	}
	res := []byte(*result)
	if strings.HasPrefix(*result, "@") {
		if res, err = os.ReadFile(strings.TrimPrefix(*result, "@")); err != nil {
			return err
		}
	}
	if own {
		args := escrow.ActionArgs{Worker: common.HexToAddress(*worker), ResultHash: crypto.Keccak256Hash(res),
			ReasonHash: crypto.Keccak256Hash([]byte(*reason)), WorkerBps: uint16(*workerBps)}
		if slashWei != "" {
			args.Slash, _ = new(big.Int).SetString(slashWei, 10)
		}
		if action == "claim" {
			agentDID := *agent
			if agentDID == "" && *key != "" {
				k, err := readKeyFile(*key)
				if err != nil {
					return err
				}
				agentDID = k.DID.String()
			}
			if agentDID == "" {
				return usagef("claim names the claiming agent: --agent DID, or --key KEYFILE")
			}
			args.AgentID = identity.AgentID(agentDID)
		}
		return runOwnAction(ctx, e, fs, *node, id, escrow.Action(action), args, *asJSON)
	}
	s, err := newSigner(ctx, fs, *node, *key, *wallet, *asJSON)
	if err != nil {
		return err
	}
	agentDID := *agent
	if agentDID == "" {
		agentDID = s.key.DID.String()
	}
	body := api.ActionBody{Wallet: s.wallet, AgentID: identity.AgentID(agentDID), Worker: common.HexToAddress(*worker),
		ResultHash: crypto.Keccak256Hash(res), ReasonHash: crypto.Keccak256Hash([]byte(*reason)), WorkerBps: uint16(*workerBps), Slash: slashWei}
	out, err := s.send(ctx, e, fmt.Sprintf("/v1/bounties/%d/%s", id, action), id, body, fmt.Sprintf("%s bounty %d", action, id))
	if err != nil {
		return err
	}
	return s.print(e, &out.BountyResult)
}

func runBountyWithdraw(ctx context.Context, e *env, args []string) error {
	fs, node, key, wallet, asJSON := bountyFlags(e, "withdraw", "--key KEYFILE --wallet ADDR [--token ADDR]",
		"Withdraw what the escrow credited your wallet (payouts it could not push to you).")
	token := fs.String("token", "", "token to withdraw (default ETH)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *token != "" && !common.IsHexAddress(*token) {
		return usagef("--token %q is not an address", *token)
	}
	own, err := ownOrNode(fs, *wallet)
	if err != nil {
		return err
	}
	if own {
		return runOwnWithdraw(ctx, e, fs, *node, common.HexToAddress(*token), *asJSON)
	}
	s, err := newSigner(ctx, fs, *node, *key, *wallet, *asJSON)
	if err != nil {
		return err
	}
	res, err := s.send(ctx, e, "/v1/withdraw", 0, api.WithdrawBody{Wallet: s.wallet, Token: common.HexToAddress(*token)}, "withdraw")
	if err != nil {
		return err
	}
	if s.asJSON {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "withdrawn in tx %s\n", res.TxHash)
	return nil
}

func runBountyList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bounty list", "[--status S] [--poster ADDR] [--worker ADDR] [--q TEXT]", "List bounties from the node's index, with their arbiter, minimum stake and task.")
	node := fs.nodeURL()
	status := fs.String("status", "", "open, assigned, submitted, disputed, accepted, released, resolved, refunded or cancelled")
	poster := fs.String("poster", "", "only this poster's")
	worker := fs.String("worker", "", "only this worker's")
	text := fs.String("q", "", "only bounties whose task text contains this (case-insensitive)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	q := url.Values{}
	for k, v := range map[string]string{"status": *status, "poster": *poster, "worker": *worker, "q": *text} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var out struct {
		Bounties []*wire.Bounty `json:"bounties"`
	}
	if out.Bounties, err = c.Bounties(ctx, q); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, out)
	}
	if len(out.Bounties) == 0 {
		fmt.Fprintln(e.stdout, "no bounties")
	}
	for _, b := range out.Bounties {
		fmt.Fprintf(e.stdout, "%-16d %-10s %s %s  poster %s  arbiter %s  min stake %s\n", b.ID, b.Status, formatAmount(b.Amount), tokenName(b.Token),
			b.Poster.Hex(), b.Arbiter.Hex(), formatAmount(b.MinStake))
		if line := specLine(b); line != "" {
			fmt.Fprintf(e.stdout, "%16s %s\n", "", line)
		}
	}
	return nil
}

// specText is a bounty's task text as the CLI shows it: checked here against the specHash
// the contract recorded (a node cannot show another task than the one posted), or why not.
func specText(b *wire.Bounty) (string, bool) {
	switch {
	case b.Spec == "":
		return "(this node does not hold the task text; its keccak256 is " + b.SpecHash.Hex() + ")", false
	case escrow.SpecHash(b.Spec) != b.SpecHash:
		return "(the node's task text does not match the specHash on chain: not shown)", false
	}
	return b.Spec, true
}

// specLine is the first line of a bounty's task text, cut to fit a list.
func specLine(b *wire.Bounty) string {
	text, ok := specText(b)
	if !ok {
		return ""
	}
	line, _, more := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 100 {
		line, more = string(r[:100]), true
	}
	if more {
		line += " …"
	}
	return "task: " + line
}

func runBountyShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bounty show", "ID", "Show a bounty and its history from the node's index.")
	node := fs.nodeURL()
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the bounty ID")
	}
	if _, err := strconv.ParseUint(pos[0], 10, 64); err != nil {
		return usagef("bounty ID %q must be a positive integer", pos[0])
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	b, err := c.Bounty(ctx, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, b)
	}
	printBounty(e, b)
	return nil
}

// runDIDBind binds a DID to a wallet with a node: both keys sign the binding statement.
func runDIDBind(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "did bind", "--key KEYFILE (--keystore FILE | --private-key KEY | --signer URL --from ADDR | --dev-account N) [--node URL] [--rpc-url URL]", strings.TrimSpace(`
Bind your DID to a wallet on chain: the DID key signs the binding statement (JWS), the wallet
signs it too (EIP-712, for the node's chain and stake registry), and the binding is recorded
with StakeRegistry.bind, where every node reads it. When the node holds the wallet it sends
the bind itself; otherwise the CLI sends it from your wallet, to --rpc-url or through the
node's JSON-RPC relay. Either way it answers once the node's index counts the binding. Once
on chain, requests signed by the DID may act from the wallet.`))
	node := fs.nodeURL()
	key := fs.String("key", "", "your DID's private key file")
	wallet := fs.ownWallet().withOldSpellings(fs, "wallet-key", "dev-wallet")
	rpcURL := fs.rpcURL("the chain's JSON-RPC URL, to send the bind from your wallet (default: through the node)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	if *key == "" {
		return usagef("--key is required")
	}
	w, err := wallet.open()
	if err != nil {
		return err
	}
	k, err := readKeyFile(*key)
	if err != nil {
		return err
	}
	c, info, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	if err := w.checkNode(info, *node); err != nil {
		return err
	}
	b, err := signBinding(ctx, k, w.signer, info)
	if err != nil {
		return err
	}
	raw, _ := json.Marshal(b)
	c = c.WithTimeout(defaultWriteTimeout) // a node holding the wallet answers once the bind is indexed
	ans, err := c.AddBinding(ctx, raw)
	if err != nil {
		return err
	}
	if !ans.OnChain && ans.To != nil {
		// The node does not hold the wallet: send the bind from it, then ask again.
		if ans, err = sendOwnBind(ctx, e, c, info, *node, *rpcURL, w, ans, raw); err != nil {
			return err
		}
	}
	if *asJSON {
		return printJSON(e, ans)
	}
	switch {
	case ans.OnChain && ans.TxHash != "":
		fmt.Fprintf(e.stdout, "bound %s to wallet %s on chain (block %d, tx %s)\n", k.DID, ans.Statement.Wallet.Hex(), ans.Block, ans.TxHash)
	case ans.OnChain:
		fmt.Fprintf(e.stdout, "%s is already bound to wallet %s on chain\n", k.DID, ans.Statement.Wallet.Hex())
	default:
		return fmt.Errorf("the bind of %s to %s was sent but the node does not count it", k.DID, ans.Statement.Wallet.Hex())
	}
	return nil
}

// sendOwnBind sends the bind the node answered with (ans.To, ans.Data) from the user's own
// wallet, waits until the node has indexed it, and asks the node again.
func sendOwnBind(ctx context.Context, e *env, c *client.Client, info api.Info, nodeURL, rpcURL string, w *ownWallet, ans api.BindingAnswer, raw []byte) (api.BindingAnswer, error) {
	o, err := connectOwn(ctx, e, w, c, info, nodeURL, rpcURL, "did bind", 0)
	if err != nil {
		return ans, err
	}
	defer o.Close()
	// The call is built here, never taken from the node's answer: a node (or whoever sits
	// between) must not get the user's key to sign a call of its choosing.
	r, err := o.send(ctx, txn.Call{To: o.contract("StakeRegistry"), Data: contracts.NewStakeRegistry().PackBind(identity.AgentID(ans.Statement.DID), raw), Decode: stake.DecodeRevert})
	if errors.Is(err, stake.ErrAlreadyBound) {
		// Bound meanwhile (through another node, or an earlier run): the node, asked again,
		// reads the chain up to its head and answers with the binding there.
		return c.AddBinding(ctx, raw)
	}
	if err != nil {
		return ans, err
	}
	again, err := c.AddBinding(ctx, raw)
	if err != nil {
		return ans, err
	}
	again.TxHash, again.Block = r.TxHash.Hex(), r.BlockNumber.Uint64()
	return again, nil
}

// signBinding signs the binding of k's DID to wallet, for the node's chain and stake
// registry in info: both keys sign (the wallet EIP-712 typed data, which Clef shows its user).
func signBinding(ctx context.Context, k *identity.Key, wallet txn.TypedDataSigner, info api.Info) (*identity.Binding, error) {
	return identity.SignBindingWith(identity.BindingStatement{
		DID: k.DID.String(), Wallet: wallet.Address(), ChainID: info.Chain.ID,
		Registry: common.HexToAddress(info.Contracts["StakeRegistry"]), IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce(),
	}, k, func(data apitypes.TypedData) ([]byte, error) { return wallet.SignTypedData(ctx, data) })
}
