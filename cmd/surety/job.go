package main

import (
	"context"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/txn"
)

// jobCommands are the `surety job` commands that send a transaction, with their help.
var jobCommands = map[string]string{
	"create":   "open an ERC-8183 job on the node's JobEscrow (you are its client)",
	"provider": "as the client, name the provider of a job created without one (--provider)",
	"budget":   "as the client or the provider, set the job's payment token and amount (--token, --amount)",
	"fund":     "as the client, escrow the budget the node's index shows (approving the token first when needed)",
	"submit":   "as the provider, hand in the deliverable (--deliverable)",
	"complete": "as the evaluator, accept the submission: the provider is paid, less fees",
	"reject":   "as the client (open job) or the evaluator (funded or submitted), reject: the escrow goes back to the client",
	"refund":   "after the expiry, send a job's escrow back to its client (claimRefund: anyone may)",
}

func runJobCmd(ctx context.Context, e *env, args []string) error {
	sub := map[string]func(context.Context, *env, []string) error{
		"show": runJobShow,
		"list": runJobList,
	}
	for name := range jobCommands {
		sub[name] = func(ctx context.Context, e *env, args []string) error { return runJobWrite(ctx, e, name, args) }
	}
	return runSubcommand(ctx, e, "job", "create | provider|budget|fund|submit|complete|reject|refund ID | show ID | list", sub, args)
}

// jobResult is what a job write prints with --json: the job as the node indexed it after the
// transaction, and the transaction.
type jobResult struct {
	Job     *wire.Job `json:"job,omitempty"`
	TxHash  string    `json:"txHash"`
	Block   uint64    `json:"block"`
	GasUsed uint64    `json:"gasUsed"`
}

// runJobWrite sends one job call from the user's own wallet and prints the node's view of
// the job after it.
func runJobWrite(ctx context.Context, e *env, action string, args []string) error {
	about := jobCommands[action]
	synopsis := "[wallet flags] ID"
	if action == "create" {
		synopsis = "[wallet flags] --evaluator ADDR [--provider ADDR] [--expires 24h] [--description TEXT]"
	}
	fs := newFlags(e, "job "+action, synopsis, strings.ToUpper(about[:1])+about[1:]+`.

ERC-8183 jobs are sent from your own wallet (--keystore, --private-key, --signer or
--dev-account), to --rpc-url or through the node's JSON-RPC relay (which relays calls to the
job contracts, but no token approval: fund an ERC-20 job with --rpc-url, or approve it
yourself). The CLI shows the transaction as it goes, waits for the node to index it, and
prints the node's view of the job. Any ERC-8183 tool (cast, an SDK) can send the same calls.`)
	node := fs.nodeURL()
	fs.own = fs.ownWallet()
	fs.rpc = fs.rpcURL("the chain's JSON-RPC URL, to send from your own wallet (default: through the node)")
	asJSON := fs.Bool("json", false, "print JSON")
	timeout := fs.Duration("timeout", defaultWriteTimeout, "how long to wait for each transaction's receipt")
	// create
	evaluator := fs.String("evaluator", "", "create: who completes or rejects the submission (never the provider)")
	expires := fs.Duration("expires", 24*time.Hour, "create: time from now after which anyone may send the escrow back to you (claimRefund)")
	description := fs.String("description", "", "create: the job's description (text, or @FILE), stored on chain")
	hook := fs.String("hook", "", "create: the job's hook (a whitelisted IERC8183Hook; default none)")
	quiet := fs.Bool("quiet", false, "create: print only the job id (for scripts: ID=$(surety job create ... --quiet))")
	// create, provider
	provider := fs.String("provider", "", "create, provider: the provider's wallet")
	agentID := fs.String("agent-id", "", "create, provider: the provider's ERC-8004 agent id (default none)")
	// budget
	token := fs.String("token", "", "budget: the ERC-20 to pay in (ERC-8183 jobs pay in a token)")
	amount := fs.String("amount", "", "budget: the amount, e.g. 1.5ether or base units")
	// submit, complete, reject
	deliverable := fs.String("deliverable", "", "submit: the deliverable (text or @FILE, recorded as its keccak256; or a 0x 32-byte hash as is)")
	reason := fs.String("reason", "", "complete, reject: why (text, recorded as its keccak256; or a 0x 32-byte hash as is)")
	pos, err := fs.parseArgs(args)
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
	addr := func(flag, v string, required bool) (common.Address, error) {
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
	var a jobs.ActionArgs
	var agent *big.Int
	if *agentID != "" {
		v, ok := new(big.Int).SetString(*agentID, 10)
		if !ok || v.Sign() < 0 {
			return usagef("--agent-id %q is not a non-negative integer", *agentID)
		}
		agent = v
	}
	var create jobs.CreateRequest
	switch action {
	case "create":
		if create.Evaluator, err = addr("evaluator", *evaluator, true); err != nil {
			return err
		}
		if create.Provider, err = addr("provider", *provider, false); err != nil {
			return err
		}
		if create.Hook, err = addr("hook", *hook, false); err != nil {
			return err
		}
		text, err := textArg(*description)
		if err != nil {
			return err
		}
		if *expires <= 5*time.Minute {
			return usagef("--expires must be more than 5m (ERC-8183's shortest expiry)")
		}
		create.Description, create.AgentID, create.ExpiredAt = string(text), agent, uint64(time.Now().Add(*expires).Unix())
	case "provider":
		if a.Provider, err = addr("provider", *provider, true); err != nil {
			return err
		}
		a.AgentID = agent
	case "budget":
		if a.Token, err = addr("token", *token, true); err != nil {
			return err
		}
		if a.Amount, err = parseAmount(*amount); err != nil {
			return usagef("--amount: %v", err)
		}
	case "submit":
		if *deliverable == "" {
			return usagef("submit needs --deliverable (text, @FILE or a 0x hash)")
		}
		if a.Hash, err = hashArg(*deliverable); err != nil {
			return err
		}
	case "complete", "reject":
		if a.Hash, err = hashArg(*reason); err != nil {
			return err
		}
	}
	o, err := openOwn(ctx, e, fs.own, *node, *fs.rpc, fmt.Sprintf("%s job %d", action, id), *timeout)
	if action == "create" && err == nil {
		o.what = "create job"
	}
	if err != nil {
		return err
	}
	defer o.Close()
	escrowAddr := o.contract("JobEscrow")
	if escrowAddr == (common.Address{}) {
		return fmt.Errorf("the node at %s names no JobEscrow: its deployment predates ERC-8183 jobs (redeploy with 'surety deploy')", *node)
	}
	if action == "create" {
		data, err := jobs.CreateData(create)
		if err != nil {
			return err
		}
		rc, err := o.send(ctx, txn.Call{To: escrowAddr, Data: data, Decode: jobs.Decoder(0, "")})
		if err != nil {
			return err
		}
		id, ok := jobs.CreatedID(rc, escrowAddr)
		if !ok {
			return fmt.Errorf("create: transaction %s records no job", rc.TxHash.Hex())
		}
		if *quiet && !*asJSON {
			fmt.Fprintln(e.stdout, id)
			return nil
		}
		return o.printJob(ctx, id, rc, *asJSON)
	}
	j, err := o.node.Job(ctx, id)
	if err != nil {
		return err
	}
	var ij jobs.Job
	if err := recode(j, &ij); err != nil {
		return fmt.Errorf("read job %d: %w", id, err)
	}
	data, err := jobs.ActionData(&ij, jobs.Action(action), a)
	if err != nil {
		return err
	}
	if action == "fund" && j.Budget != "0" {
		budget, _ := new(big.Int).SetString(j.Budget, 10)
		if err := o.approve(ctx, j.Token, escrowAddr, budget); err != nil {
			if *fs.rpc == "" {
				return fmt.Errorf("fund approves the token first, and the node relays no token calls: give --rpc-url (or approve %s for %s yourself): %w", escrowAddr.Hex(), j.Token.Hex(), err)
			}
			return err
		}
	}
	rc, err := o.send(ctx, txn.Call{To: escrowAddr, Data: data, Decode: jobs.Decoder(id, ij.Status)})
	if err != nil {
		return err
	}
	return o.printJob(ctx, id, rc, *asJSON)
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
		fmt.Fprintf(e.stdout, "  provider  %s%s\n", j.Provider.Hex(), agent)
	} else {
		fmt.Fprintf(e.stdout, "  provider  none yet ('surety job provider %d --provider ADDR')\n", j.ID)
	}
	fmt.Fprintf(e.stdout, "  evaluator %s\n", j.Evaluator.Hex())
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
		fmt.Fprintf(e.stdout, "%-8d %-10s %s of %s  client %s  provider %s\n", j.ID, j.Status, formatAmount(j.Budget), j.Token.Hex(), j.Client.Hex(), j.Provider.Hex())
	}
	return nil
}
