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

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/txn"
)

// jobCommands are the `surety job` commands that send a transaction, with their help.
var jobCommands = map[string]string{
	"create":   "open an ERC-8183 job on the node's JobEscrow (you are its client); --surety makes it a Surety job (SuretyHook: competing workers, disputes, stake gate)",
	"provider": "as the client, name the provider of a job created without one (--provider)",
	"budget":   "as the client or the provider, set the job's payment token and amount (--token, --amount); a Surety job's client sets its plan with it (--arbiter, --workers, ...)",
	"fund":     "as the client, escrow the budget the node's index shows (approving the token first when needed)",
	"submit":   "as the provider, hand in the deliverable (--deliverable); on a Surety job, as a worker who joined",
	"complete": "as the evaluator, accept the submission: the provider is paid, less fees",
	"reject":   "as the client (open job) or the evaluator (funded or submitted), reject: the escrow goes back to the client; on a Surety job the client's rejection is a dispute the arbiter decides",
	"refund":   "after the expiry, send a job's escrow back to its client (claimRefund: anyone may)",
	// SuretyHook's calls (Surety jobs).
	"join":            "Surety job: enter the funded job as a worker (--agent DID or --key: a minStake locks that much of the agent's stake until it settles)",
	"approve":         "Surety job, as the client: pay the single worker's submission",
	"pick":            "Surety job, as the client: pick the winners among competing workers and their shares (--winner ADDR:BPS, repeated; 10000 in all); losers get nothing and lose no stake",
	"resolve":         "Surety job, as the arbiter: split a dispute (--winner ADDR:BPS, repeated; the rest to the client) and slash a single worker's locked stake (--slash)",
	"resolve-expired": "Surety job: past the arbiter's time, split a dispute half to the client, half to the first submitters (anyone may)",
	"release":         "Surety job: past a silent review window, pay the first submitters evenly (anyone may)",
	"cancel":          "Surety job, as the client: take the budget back while nothing was submitted",
	"close":           "Surety job: end the stake locks of a job that expired or was rejected while open (anyone may)",
}

func runJobCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{
		"show":       runJobShow,
		"list":       runJobList,
		"milestones": runJobMilestones,
	}
	for name := range jobCommands {
		sub[name] = func(ctx context.Context, e *env, args []string) error { return runJobWrite(ctx, e, name, args) }
	}
	return runSubcommand(ctx, e, "job", "create | milestones | provider|budget|fund|submit|complete|reject|refund ID | join|approve|pick|resolve|resolve-expired|release|cancel|close ID | show ID | list", sub, args)
}

// hookActions are the commands sent to SuretyHook rather than JobEscrow.
var hookActions = map[string]bool{"join": true, "approve": true, "pick": true, "resolve": true, "resolve-expired": true, "release": true, "cancel": true, "close": true}

// winnerFlag is a repeated --winner ADDR:BPS.
type winnerFlag struct {
	winners []common.Address
	bps     []uint16
}

func (w *winnerFlag) String() string { return "" }

func (w *winnerFlag) Set(v string) error {
	addr, bps, ok := strings.Cut(v, ":")
	n, err := strconv.ParseUint(bps, 10, 16)
	if !ok || !common.IsHexAddress(addr) || err != nil || n > 10_000 {
		return fmt.Errorf("%q is not ADDR:BPS (a wallet and its share in basis points, 0-10000)", v)
	}
	w.winners, w.bps = append(w.winners, common.HexToAddress(addr)), append(w.bps, uint16(n))
	return nil
}

// jobResult is what a job write prints with --json: the job as the node indexed it after the
// transaction, and the transaction.
type jobResult struct {
	Job     *wire.Job `json:"job,omitempty"`
	TxHash  string    `json:"txHash"`
	Block   uint64    `json:"block"`
	GasUsed uint64    `json:"gasUsed"`
}

// jobFlags are the flags of the job commands that write.
type jobFlags struct {
	fs                                    *flags
	node, evaluator, description, hook    *string
	provider, agentID, token, amount      *string
	deliverable, reason, agent, key       *string
	arbiter, minStake, worker, slash      *string
	expires, review, arbiterTime, timeout *time.Duration
	workers, winnersMax                   *uint
	afterPart                             *uint64
	surety, quiet, asJSON, fund           *bool
	winners                               winnerFlag
}

// newJobFlags defines the flags every job write takes; each command reads those it uses.
func newJobFlags(e *env, name, synopsis, about string) *jobFlags {
	fs := newFlags(e, name, synopsis, about+`

ERC-8183 jobs are sent from your own wallet (--keystore, --private-key, --signer or
--dev-account), to --rpc-url or through the node's JSON-RPC relay (which relays calls to the
job contracts, but no token approval: fund an ERC-20 job with --rpc-url, or approve it
yourself). The CLI shows the transaction as it goes, waits for the node to index it, and
prints the node's view of the job. Any ERC-8183 tool (cast, an SDK) can send the same calls.`)
	f := &jobFlags{fs: fs, node: fs.nodeURL()}
	fs.own = fs.ownWallet()
	fs.rpc = fs.rpcURL("the chain's JSON-RPC URL, to send from your own wallet (default: through the node)")
	f.asJSON = fs.Bool("json", false, "print JSON")
	f.timeout = fs.Duration("timeout", defaultWriteTimeout, "how long to wait for each transaction's receipt")
	f.evaluator = fs.String("evaluator", "", "create: who completes or rejects the submission (never the provider; a Surety job's is the hook)")
	f.expires = fs.Duration("expires", 0, "create: time from now after which anyone may send the escrow back to the client (default 24h; a Surety job 7 days: its review, ruling and a day to settle must fit before)")
	f.description = fs.String("description", "", "create: the job's description (text, or @FILE), stored on chain")
	f.hook = fs.String("hook", "", "create: the job's hook (a whitelisted IERC8183Hook; default none)")
	f.fund = fs.Bool("fund", false, "milestones: fund every part at once")
	f.surety = fs.Bool("surety", false, "create: a Surety job: SuretyHook is its hook and evaluator, its pool the provider of record; workers join through the hook")
	f.quiet = fs.Bool("quiet", false, "create: print only the job id (for scripts: ID=$(surety job create ... --quiet))")
	f.provider = fs.String("provider", "", "create, provider: the provider's wallet")
	f.agentID = fs.String("agent-id", "", "create, provider: the provider's ERC-8004 agent id (default none)")
	f.token = fs.String("token", "", "budget: the ERC-20 to pay in (ERC-8183 jobs pay in a token)")
	f.amount = fs.String("amount", "", "budget: the amount, e.g. 1.5ether or base units")
	f.arbiter = fs.String("arbiter", "", "budget of a Surety job: who rules on disputes (never you or a worker)")
	f.review = fs.Duration("review", time.Hour, "budget of a Surety job: how long you have to approve, pick or reject once the entries close; silence then pays the workers")
	f.arbiterTime = fs.Duration("arbiter-time", 24*time.Hour, "budget of a Surety job: how long the arbiter has to rule on a dispute")
	f.workers = fs.Uint("workers", 1, "budget of a Surety job: how many workers may join (more than 1: they compete)")
	f.winnersMax = fs.Uint("max-winners", 1, "budget of a Surety job: how many of them a pick or a ruling may pay")
	f.minStake = fs.String("min-stake", "0", "budget of a Surety job: stake a join locks from the worker's agent until the job settles (a ruling may slash a single worker's)")
	f.worker = fs.String("worker", "", "budget of a Surety job: the one worker allowed to join (with --workers 1)")
	f.afterPart = fs.Uint64("after-part", 0, "budget of a Surety job: the previous milestone part (a job of yours): only its worker may join this one")
	f.deliverable = fs.String("deliverable", "", "submit: the deliverable (text or @FILE, recorded as its keccak256; or a 0x 32-byte hash as is)")
	f.reason = fs.String("reason", "", "complete, reject: why (text, recorded as its keccak256; or a 0x 32-byte hash as is)")
	f.agent = fs.String("agent", "", "join: your agent's DID, whose stake a minStake locks (default: --key's DID)")
	f.key = fs.String("key", "", "join: your DID's key file, to name your agent")
	fs.Var(&f.winners, "winner", "pick, resolve: a winner and its share, ADDR:BPS (repeat the flag)")
	f.slash = fs.String("slash", "", "resolve: take this much of the single worker's locked stake to the client (at most the plan's minStake)")
	return f
}

// runJobWrite sends one job call from the user's own wallet and prints the node's view of
// the job after it.
func runJobWrite(ctx context.Context, e *env, action string, args []string) error {
	about := jobCommands[action]
	synopsis := "[wallet flags] [flags] ID"
	if action == "create" {
		synopsis = "[wallet flags] (--evaluator ADDR [--provider ADDR] | --surety) [--expires 24h] [--description TEXT]"
	}
	f := newJobFlags(e, "job "+action, synopsis, strings.ToUpper(about[:1])+about[1:]+".")
	pos, err := f.fs.parseArgs(args)
	if err != nil {
		return err
	}
	var id uint64
	switch {
	case action == "create" && len(pos) > 0:
		return usagef("create takes no ID (see 'surety job create -h')")
	case action != "create" && len(pos) != 1:
		return usagef("give the job ID (see 'surety job %s -h')", action)
	case action != "create":
		if id, err = strconv.ParseUint(pos[0], 10, 64); err != nil || id == 0 {
			return usagef("job ID %q must be a positive integer", pos[0])
		}
	}
	var agent *big.Int
	if *f.agentID != "" {
		v, ok := new(big.Int).SetString(*f.agentID, 10)
		if !ok || v.Sign() < 0 {
			return usagef("--agent-id %q is not a non-negative integer", *f.agentID)
		}
		agent = v
	}
	what := fmt.Sprintf("%s job %d", action, id)
	if action == "create" {
		what = "create job"
	}
	if action == "create" {
		r := jobs.CreateRequest{AgentID: agent}
		if !*f.surety {
			if r.Evaluator, err = addrFlag(action, "evaluator", *f.evaluator, true); err != nil {
				return err
			}
			if r.Provider, err = addrFlag(action, "provider", *f.provider, false); err != nil {
				return err
			}
			if r.Hook, err = addrFlag(action, "hook", *f.hook, false); err != nil {
				return err
			}
		} else if *f.evaluator != "" || *f.provider != "" || *f.hook != "" {
			return usagef("--surety names the evaluator, provider and hook itself (SuretyHook and its pool): drop --evaluator, --provider and --hook")
		}
		text, err := textArg(*f.description)
		if err != nil {
			return err
		}
		expires := *f.expires
		if expires == 0 {
			expires = 24 * time.Hour
			if *f.surety {
				expires = 7 * 24 * time.Hour
			}
		}
		if expires <= 5*time.Minute {
			return usagef("--expires must be more than 5m (ERC-8183's shortest expiry)")
		}
		r.Description, r.ExpiredAt = string(text), uint64(time.Now().Add(expires).Unix())
		o, err := openOwn(ctx, e, f.fs.own, *f.node, *f.fs.rpc, what, *f.timeout)
		if err != nil {
			return err
		}
		defer o.Close()
		ids, rc, err := o.createJobs(ctx, []jobs.CreateRequest{r}, *f.surety)
		if err != nil {
			return err
		}
		if *f.quiet && !*f.asJSON {
			fmt.Fprintln(e.stdout, ids[0])
			return nil
		}
		return o.printJob(ctx, ids[0], rc, *f.asJSON)
	}
	o, err := openOwn(ctx, e, f.fs.own, *f.node, *f.fs.rpc, what, *f.timeout)
	if err != nil {
		return err
	}
	defer o.Close()
	escrowAddr, hookAddr, err := o.jobContracts()
	if err != nil {
		return err
	}
	j, err := o.node.Job(ctx, id)
	if err != nil {
		return err
	}
	var ij jobs.Job
	if err := recode(j, &ij); err != nil {
		return fmt.Errorf("read job %d: %w", id, err)
	}
	surety := hookAddr != (common.Address{}) && j.Hook == hookAddr
	if hookActions[action] && !surety {
		return usagef("job %d is not a Surety job (its hook is not SuretyHook): %s is a SuretyHook call", id, action)
	}
	to, decode := escrowAddr, jobs.Decoder(id, ij.Status)
	var data []byte
	switch {
	case hookActions[action] || surety && (action == "submit" || action == "reject"):
		a, err := f.hookArgs(action)
		if err != nil {
			return err
		}
		to = hookAddr
		if data, err = jobs.HookActionData(&ij, jobs.Action(action), a); err != nil {
			return err
		}
	default:
		a, err := f.coreArgs(action, agent)
		if err != nil {
			return err
		}
		if action == "budget" && surety {
			if a.OptParams, err = f.plan(); err != nil {
				return err
			}
		}
		if data, err = jobs.ActionData(&ij, jobs.Action(action), a); err != nil {
			return err
		}
		if action == "fund" && j.Budget != "0" {
			budget, _ := new(big.Int).SetString(j.Budget, 10)
			if err := o.approveForJob(ctx, j.Token, escrowAddr, budget, *f.fs.rpc); err != nil {
				return err
			}
		}
	}
	rc, err := o.send(ctx, txn.Call{To: to, Data: data, Decode: decode})
	if err != nil {
		return err
	}
	return o.printJob(ctx, id, rc, *f.asJSON)
}

// addrFlag reads an address flag of command action (required: a usage error when empty).
func addrFlag(action, flag, v string, required bool) (common.Address, error) {
	switch {
	case v == "" && !required:
		return common.Address{}, nil
	case v == "":
		return common.Address{}, usagef("%s needs --%s ADDR", action, flag)
	case !common.IsHexAddress(v):
		return common.Address{}, usagef("--%s %q is not an address", flag, v)
	}
	return common.HexToAddress(v), nil
}

// coreArgs reads the flags of a JobEscrow call.
func (f *jobFlags) coreArgs(action string, agent *big.Int) (jobs.ActionArgs, error) {
	var a jobs.ActionArgs
	var err error
	switch action {
	case "provider":
		a.Provider, err = addrFlag(action, "provider", *f.provider, true)
		a.AgentID = agent
	case "budget":
		if a.Token, err = addrFlag(action, "token", *f.token, true); err != nil {
			return a, err
		}
		if a.Amount, err = parseAmount(*f.amount); err != nil {
			return a, usagef("--amount: %v", err)
		}
	case "submit":
		if *f.deliverable == "" {
			return a, usagef("submit needs --deliverable (text, @FILE or a 0x hash)")
		}
		a.Hash, err = hashArg(*f.deliverable)
	case "complete", "reject":
		a.Hash, err = hashArg(*f.reason)
	}
	return a, err
}

// hookArgs reads the flags of a SuretyHook call.
func (f *jobFlags) hookArgs(action string) (jobs.HookArgs, error) {
	var a jobs.HookArgs
	var err error
	switch action {
	case "join":
		did := *f.agent
		if did == "" && *f.key != "" {
			k, err := readKeyFile(*f.key)
			if err != nil {
				return a, err
			}
			did = k.DID.String()
		}
		if did != "" {
			a.AgentID = identity.AgentID(did)
		}
	case "submit":
		if *f.deliverable == "" {
			return a, usagef("submit needs --deliverable (text, @FILE or a 0x hash)")
		}
		a.Hash, err = hashArg(*f.deliverable)
	case "reject":
		a.Hash, err = hashArg(*f.reason)
	case "pick", "resolve":
		if action == "pick" && len(f.winners.winners) == 0 {
			return a, usagef("pick needs --winner ADDR:BPS (repeat it for each winner; the shares add up to 10000)")
		}
		a.Winners, a.Bps = f.winners.winners, f.winners.bps
		if *f.slash != "" {
			if a.Slash, err = parseAmount(*f.slash); err != nil {
				return a, usagef("--slash: %v", err)
			}
		}
	}
	return a, err
}

// plan reads a Surety job's plan flags into setBudget's optParams.
func (f *jobFlags) plan() ([]byte, error) {
	arbiter, err := addrFlag("budget", "arbiter", *f.arbiter, true)
	if err != nil {
		return nil, usagef("a Surety job's budget carries its plan: name its --arbiter ADDR")
	}
	worker, err := addrFlag("budget", "worker", *f.worker, false)
	if err != nil {
		return nil, err
	}
	stake, err := parseAmount(*f.minStake)
	if err != nil {
		return nil, usagef("--min-stake: %v", err)
	}
	if *f.workers == 0 || *f.workers > 1<<16-1 || *f.winnersMax == 0 || *f.winnersMax > *f.workers {
		return nil, usagef("--workers must be at least 1, and --max-winners between 1 and --workers")
	}
	return jobs.PlanData(jobs.Plan{Arbiter: arbiter, ReviewWindow: uint32(f.review.Seconds()), ArbiterTime: uint32(f.arbiterTime.Seconds()),
		MaxEntries: uint16(*f.workers), MaxWinners: uint16(*f.winnersMax), MinStake: stake, Worker: worker, PrevPart: new(big.Int).SetUint64(*f.afterPart)})
}

// jobContracts are the node's JobEscrow and SuretyHook (zero when it names none).
func (o *ownSession) jobContracts() (escrow, hook common.Address, err error) {
	escrow, hook = o.contract("JobEscrow"), o.contract("SuretyHook")
	if escrow == (common.Address{}) {
		return escrow, hook, errors.New("the node names no JobEscrow: its deployment predates ERC-8183 jobs (redeploy with 'surety deploy')")
	}
	return escrow, hook, nil
}

// createJobs opens jobs at JobEscrow, one transaction each (Surety jobs name SuretyHook and
// its pool), and returns their ids and the last receipt.
func (o *ownSession) createJobs(ctx context.Context, rs []jobs.CreateRequest, surety bool) ([]uint64, *types.Receipt, error) {
	escrowAddr, hookAddr, err := o.jobContracts()
	if err != nil {
		return nil, nil, err
	}
	var pool common.Address
	if surety {
		if hookAddr == (common.Address{}) {
			return nil, nil, fmt.Errorf("the node names no SuretyHook: its deployment predates Surety jobs")
		}
		h := contracts.NewSuretyHook()
		if pool, err = bind.Call(h.Instance(o.chain, hookAddr), &bind.CallOpts{Context: ctx}, h.PackPool(), h.UnpackPool); err != nil {
			return nil, nil, fmt.Errorf("read SuretyHook's pool: %w", err)
		}
	}
	var ids []uint64
	var rc *types.Receipt
	for _, r := range rs {
		var data []byte
		if surety {
			data, err = jobs.SuretyCreate(r, hookAddr, pool)
		} else {
			data, err = jobs.CreateData(r)
		}
		if err != nil {
			return nil, nil, err
		}
		if rc, err = o.send(ctx, txn.Call{To: escrowAddr, Data: data, Decode: jobs.Decoder(0, "")}); err != nil {
			return nil, nil, err
		}
		id, ok := jobs.CreatedID(rc, escrowAddr)
		if !ok {
			return nil, nil, fmt.Errorf("create: transaction %s records no job", rc.TxHash.Hex())
		}
		ids = append(ids, id)
	}
	return ids, rc, nil
}

// approveForJob lets JobEscrow take amount of token from the wallet, when it may not yet;
// through the node's relay (no rpcURL), which relays no token calls, it says so.
func (o *ownSession) approveForJob(ctx context.Context, token, escrow common.Address, amount *big.Int, rpcURL string) error {
	if err := o.approve(ctx, token, escrow, amount); err != nil {
		if rpcURL == "" {
			return fmt.Errorf("funding approves JobEscrow %s to take token %s first, and the node relays no token calls: give --rpc-url (or approve it yourself): %w", escrow.Hex(), token.Hex(), err)
		}
		return err
	}
	return nil
}

// textArg reads a text flag: the text, or @FILE's content.
func textArg(v string) ([]byte, error) {
	if name, ok := strings.CutPrefix(v, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, startError{err}
		}
		return b, nil
	}
	return []byte(v), nil
}

// hashArg reads a hash flag: a 0x 32-byte hash as is, else the keccak256 of the text (or of
// @FILE's content); empty is the zero hash.
func hashArg(v string) (common.Hash, error) {
	if v == "" {
		return common.Hash{}, nil
	}
	if strings.HasPrefix(v, "0x") && len(v) == 66 {
		if b := common.FromHex(v); len(b) == 32 {
			return common.BytesToHash(b), nil
		}
	}
	b, err := textArg(v)
	if err != nil {
		return common.Hash{}, err
	}
	return crypto.Keccak256Hash(b), nil
}

// printJob prints the node's view of job id after the transaction rc.
func (o *ownSession) printJob(ctx context.Context, id uint64, rc *types.Receipt, asJSON bool) error {
	j, err := o.node.Job(ctx, id)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(o.e, jobResult{Job: j, TxHash: rc.TxHash.Hex(), Block: rc.BlockNumber.Uint64(), GasUsed: rc.GasUsed})
	}
	printJob(o.e, j)
	return nil
}

func printJob(e *env, j *wire.Job) {
	fmt.Fprintf(e.stdout, "job %d: %s\n  client    %s\n", j.ID, j.Status, j.Client.Hex())
	if j.Provider != (common.Address{}) {
		agent := ""
		if j.ProviderAgentID != "" && j.ProviderAgentID != "0" {
			agent = " (ERC-8004 agent " + j.ProviderAgentID + ")"
		}
		if j.Surety != nil {
			agent = " (SuretyHook's pool: it pays the workers below)"
		}
		fmt.Fprintf(e.stdout, "  provider  %s%s\n", j.Provider.Hex(), agent)
	} else {
		fmt.Fprintf(e.stdout, "  provider  none yet ('surety job provider %d --provider ADDR')\n", j.ID)
	}
	if j.Surety != nil {
		fmt.Fprintf(e.stdout, "  evaluator %s (SuretyHook: the client approves or picks through it, the arbiter rules)\n", j.Evaluator.Hex())
	} else {
		fmt.Fprintf(e.stdout, "  evaluator %s\n", j.Evaluator.Hex())
	}
	if j.Hook != (common.Address{}) {
		fmt.Fprintf(e.stdout, "  hook      %s\n", j.Hook.Hex())
	}
	if j.Token != (common.Address{}) {
		fmt.Fprintf(e.stdout, "  budget    %s of token %s\n", formatAmount(j.Budget), j.Token.Hex())
	} else {
		fmt.Fprintf(e.stdout, "  budget    none yet ('surety job budget %d --token ADDR --amount N')\n", j.ID)
	}
	fmt.Fprintf(e.stdout, "  expires   %s\n", time.Unix(int64(min(j.ExpiredAt, 1<<62)), 0).UTC().Format(time.RFC3339))
	if j.Description != "" {
		line, _, more := strings.Cut(j.Description, "\n")
		if more {
			line += " …"
		}
		fmt.Fprintf(e.stdout, "  about     %s\n", line)
	}
	if j.Deliverable != "" {
		fmt.Fprintf(e.stdout, "  deliverable %s\n", j.Deliverable)
	}
	if j.Payout != "0" || j.Refund != "0" {
		fmt.Fprintf(e.stdout, "  paid      provider %s, client %s, fees %s + %s\n", formatAmount(j.Payout), formatAmount(j.Refund), formatAmount(j.PlatformFee), formatAmount(j.EvaluatorFee))
	}
	if sj := j.Surety; sj != nil {
		fmt.Fprintf(e.stdout, "  surety    %s", sj.Phase)
		var plan struct {
			Arbiter      string `json:"arbiter"`
			ReviewWindow uint64 `json:"reviewWindow"`
			MaxEntries   uint64 `json:"maxEntries"`
			MaxWinners   uint64 `json:"maxWinners"`
			MinStake     string `json:"minStake"`
		}
		if len(sj.Plan) > 0 && json.Unmarshal(sj.Plan, &plan) == nil {
			fmt.Fprintf(e.stdout, ": %d worker(s), %d may win, arbiter %s, review %s", plan.MaxEntries, plan.MaxWinners, plan.Arbiter, time.Duration(plan.ReviewWindow)*time.Second)
			if plan.MinStake != "" && plan.MinStake != "0" {
				fmt.Fprintf(e.stdout, ", a join locks %s of stake", formatAmount(plan.MinStake))
			}
		}
		fmt.Fprintln(e.stdout)
		for _, en := range sj.Entries {
			line := "joined"
			if en.Deliverable != "" {
				line = "submitted " + en.Deliverable
			}
			if en.Amount != "" {
				line += fmt.Sprintf(", awarded %s (%d bps)", formatAmount(en.Amount), en.Bps)
			}
			fmt.Fprintf(e.stdout, "  worker    %s %s\n", en.Worker.Hex(), line)
		}
		if d := sj.Dispute; d != nil {
			fmt.Fprintf(e.stdout, "  disputed  by %s (reason %s): the arbiter decides\n", d.By.Hex(), d.ReasonHash)
		}
		if st := sj.Settlement; st != nil {
			fmt.Fprintf(e.stdout, "  settled   %s: workers %s, client %s, slash %s\n", st.Outcome, formatAmount(st.ToWorkers), formatAmount(st.ToClient), formatAmount(st.Slash))
		}
		if len(sj.Parts) > 0 {
			fmt.Fprintf(e.stdout, "  parts     %v (milestones)\n", sj.Parts)
		}
	}
	for _, h := range j.History {
		fmt.Fprintf(e.stdout, "  block %-6d %-16s tx %s\n", h.Block, h.Name, h.TxHash)
	}
}

func runJobShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "job show", "ID", "Show an ERC-8183 job and its history from the node's index.")
	node := fs.nodeURL()
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the job ID")
	}
	id, err := strconv.ParseUint(pos[0], 10, 64)
	if err != nil || id == 0 {
		return usagef("job ID %q must be a positive integer", pos[0])
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	j, err := c.Job(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, j)
	}
	printJob(e, j)
	return nil
}

func runJobList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "job list", "[--status S] [--client ADDR] [--provider ADDR] [--evaluator ADDR] [--after ID] [--limit N]",
		"List ERC-8183 jobs from the node's index, by id.")
	node := fs.nodeURL()
	status := fs.String("status", "", "open, funded, submitted, completed, rejected or expired")
	client := fs.String("client", "", "only this client's")
	provider := fs.String("provider", "", "only jobs with this provider, or that this worker entered through the hook")
	evaluator := fs.String("evaluator", "", "only jobs with this evaluator")
	after := fs.Uint64("after", 0, "only jobs with a larger id (the last id of the previous page)")
	limit := fs.Uint("limit", 0, "at most this many (default 100)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	q := url.Values{}
	for k, v := range map[string]string{"status": *status, "client": *client, "provider": *provider, "evaluator": *evaluator} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if *after > 0 {
		q.Set("after", strconv.FormatUint(*after, 10))
	}
	if *limit > 0 {
		q.Set("limit", strconv.FormatUint(uint64(*limit), 10))
	}
	c, err := newNodeClient(*node)
	if err != nil {
		return err
	}
	list, err := c.Jobs(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, wire.JobList{Jobs: list})
	}
	if len(list) == 0 {
		fmt.Fprintln(e.stdout, "no jobs")
	}
	for _, j := range list {
		status := string(j.Status)
		if j.Surety != nil {
			status += " (surety: " + j.Surety.Phase + ")"
		}
		fmt.Fprintf(e.stdout, "%-8d %-10s %s of %s  client %s  provider %s\n", j.ID, status, formatAmount(j.Budget), j.Token.Hex(), j.Client.Hex(), j.Provider.Hex())
	}
	return nil
}

func runJobMilestones(ctx context.Context, e *env, args []string) error {
	f := newJobFlags(e, "job milestones", "[wallet flags] --parts 1ether,1ether,2ether --token ADDR --arbiter ADDR [--worker ADDR] [--fund]",
		`Open a milestone job: one Surety job per part, each a standard ERC-8183 job with its own
budget, chained by its plan (each part names the one before, and only the worker who joined
that part may join the next), so each part is submitted, approved and paid on its own. With
--fund, every part is funded at once (the token approved for their sum).`)
	parts := f.fs.String("parts", "", "the parts' budgets in order, comma-separated (1ether,1ether,2ether)")
	if err := f.fs.parse(args); err != nil {
		return err
	}
	var amounts []*big.Int
	total := new(big.Int)
	for _, p := range strings.Split(*parts, ",") {
		if strings.TrimSpace(p) == "" {
			continue
		}
		v, err := parseAmount(p)
		if err != nil || v.Sign() == 0 {
			return usagef("--parts: %q is not a positive amount", p)
		}
		amounts, total = append(amounts, v), total.Add(total, v)
	}
	if len(amounts) < 2 || len(amounts) > 20 {
		return usagef("--parts names 2 to 20 budgets, comma-separated (1ether,1ether,2ether)")
	}
	token, err := addrFlag("milestones", "token", *f.token, true)
	if err != nil {
		return err
	}
	*f.workers, *f.winnersMax = 1, 1
	if _, err := f.plan(); err != nil { // the flags' own mistakes, before anything is sent
		return err
	}
	ids, rc, node, err := openSuretyJobs(ctx, e, f, "milestone", amounts, token, *f.fund)
	if err != nil {
		return err
	}
	if *f.asJSON {
		var out wire.JobList
		for _, id := range ids {
			j, err := node.Job(ctx, id)
			if err != nil {
				return err
			}
			out.Jobs = append(out.Jobs, j)
		}
		return printJSON(e, out)
	}
	if *f.quiet {
		for _, id := range ids {
			fmt.Fprintln(e.stdout, id)
		}
		return nil
	}
	fmt.Fprintf(e.stdout, "milestone job: parts %v (last tx %s)\n", ids, rc.TxHash.Hex())
	return nil
}

// openSuretyJobs creates one Surety job per amount from the user's own wallet, plans each
// with f's plan flags (each after the first naming the one before it, when there are
// several: a milestone chain), and with fund approves the token for their sum and funds
// them all. what names the jobs in progress lines ("milestone", "bounty").
func openSuretyJobs(ctx context.Context, e *env, f *jobFlags, what string, amounts []*big.Int, token common.Address, fund bool) ([]uint64, *types.Receipt, *client.Client, error) {
	total := new(big.Int)
	for _, a := range amounts {
		total.Add(total, a)
	}
	text, err := textArg(*f.description)
	if err != nil {
		return nil, nil, nil, err
	}
	expires := *f.expires
	if expires == 0 {
		expires = 7 * 24 * time.Hour
	}
	o, err := openOwn(ctx, e, f.fs.own, *f.node, *f.fs.rpc, what, *f.timeout)
	if err != nil {
		return nil, nil, nil, err
	}
	defer o.Close()
	escrowAddr, _, err := o.jobContracts()
	if err != nil {
		return nil, nil, nil, err
	}
	var ids []uint64
	var rc *types.Receipt
	for i, amount := range amounts {
		o.what = fmt.Sprintf("%s %d/%d", what, i+1, len(amounts))
		desc := strings.TrimSpace(string(text))
		if len(amounts) > 1 {
			desc = fmt.Sprintf("%s (part %d of %d)", desc, i+1, len(amounts))
		}
		r := jobs.CreateRequest{Description: desc, ExpiredAt: uint64(time.Now().Add(expires).Unix())}
		created, _, err := o.createJobs(ctx, []jobs.CreateRequest{r}, true)
		if err != nil {
			return nil, nil, nil, err
		}
		id := created[0]
		if i > 0 {
			*f.afterPart = ids[i-1]
		}
		plan, err := f.plan()
		if err != nil {
			return nil, nil, nil, err
		}
		data, err := jobs.ActionData(&jobs.Job{ID: id, Status: jobs.StatusOpen}, jobs.ActionBudget, jobs.ActionArgs{Token: token, Amount: amount, OptParams: plan})
		if err != nil {
			return nil, nil, nil, err
		}
		if rc, err = o.send(ctx, txn.Call{To: escrowAddr, Data: data, Decode: jobs.Decoder(id, jobs.StatusOpen)}); err != nil {
			return nil, nil, nil, err
		}
		ids = append(ids, id)
	}
	if fund {
		if err := o.approveForJob(ctx, token, escrowAddr, total, *f.fs.rpc); err != nil {
			return nil, nil, nil, err
		}
		for i, id := range ids {
			o.what = fmt.Sprintf("fund %s %d/%d", what, i+1, len(ids))
			data := contracts.NewJobEscrow().PackFund(new(big.Int).SetUint64(id), amounts[i], nil)
			if rc, err = o.send(ctx, txn.Call{To: escrowAddr, Data: data, Decode: jobs.Decoder(id, jobs.StatusOpen)}); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return ids, rc, o.node, nil
}
