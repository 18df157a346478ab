package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/stake"
)

func runStakeCmd(ctx context.Context, e *env, args []string) error {
	return runSubcommand(ctx, e, "stake", "add | unbond | withdraw | show DID", map[string]func(context.Context, *env, []string) error{
		"add": func(ctx context.Context, e *env, args []string) error {
			return runStakeChange(ctx, e, stake.OpStake, args)
		},
		"unbond": func(ctx context.Context, e *env, args []string) error {
			return runStakeChange(ctx, e, stake.OpUnbond, args)
		},
		"withdraw": func(ctx context.Context, e *env, args []string) error {
			return runStakeChange(ctx, e, stake.OpWithdrawStake, args)
		},
		"show": runStakeShow,
	}, args)
}

var stakeCommands = map[stake.OpKind]struct{ name, synopsis, about, path string }{
	stake.OpStake: {"add", "--key KEYFILE --wallet ADDR --amount 2ether", `
Bond stake for your agent (the DID of --key) from a wallet the node holds and your DID is bound
to ('surety did bind'). The first time, the node also binds the agent to the wallet on chain
with that binding. Staked agents rank first in discovery, and their audits count.`, "/v1/stake"},
	stake.OpUnbond: {"unbond", "--key KEYFILE --wallet ADDR --amount 1ether", `
Start unbonding stake: it stops counting at once and can be withdrawn with 'surety stake
withdraw' after the registry's delay (7 days by default). Stake that claimed bounties lock
cannot be unbonded until they end.`, "/v1/stake/unbond"},
	stake.OpWithdrawStake: {"withdraw", "--key KEYFILE --wallet ADDR", `
Pay the wallet the stake you unbonded, once the registry's delay has passed.`, "/v1/stake/withdraw"},
}

func runStakeChange(ctx context.Context, e *env, kind stake.OpKind, args []string) error {
	c := stakeCommands[kind]
	fs, node, key, wallet, asJSON := signerFlags(e, "stake "+c.name, c.synopsis, strings.TrimSpace(c.about)+`

With your own wallet (--keystore, --private-key, --signer or --dev-account) the CLI signs
and sends the transactions itself, to --rpc-url, or through the node's JSON-RPC relay when
none is given; the node never holds the key. It shows each
transaction as it goes (sent, mined, indexed by the node) and then the node's view. With
--wallet ADDR the node sends from a wallet it holds.`)
	fs.own = fs.ownWallet()
	rpcURL := fs.rpcURL("the chain's JSON-RPC URL, to send from your own wallet (default: through the node)")
	var amount *string // stake and unbond take an amount; withdraw takes what is unbonded
	if kind != stake.OpWithdrawStake {
		amount = fs.String("amount", "", "amount: 1.5ether, 20gwei or base units (for a token stake, its base units)")
	}
	if err := fs.parse(args); err != nil {
		return err
	}
	var amt *big.Int
	if amount != nil {
		var err error
		if amt, err = positiveAmount(*amount); err != nil {
			return err
		}
	}
	own, err := ownOrNode(fs, *wallet)
	if err != nil {
		return err
	}
	if own {
		return runOwnStake(ctx, e, ownStake{kind: kind, node: *node, key: *key, rpcURL: *rpcURL, amount: amt, asJSON: *asJSON, wallet: fs.own, timeout: *fs.timeout})
	}
	s, err := newSigner(ctx, fs, *node, *key, *wallet, *asJSON)
	if err != nil {
		return err
	}
	var body any = api.StakeWithdrawBody{Op: string(kind), Wallet: s.wallet}
	if amt != nil {
		body = api.StakeBody{Op: string(kind), Wallet: s.wallet, Amount: amt.String()}
	}
	res, err := s.send(ctx, e, c.path, 0, body, "stake "+c.name)
	if err != nil {
		return err
	}
	if s.asJSON {
		return printJSON(e, res)
	}
	printStake(e, s.key.DID.String(), res.Stake)
	return nil
}

func runStakeShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "stake show", "--wallet ADDR DID", "Show an agent's stake under a controller wallet, read from the chain.")
	node := fs.nodeURL()
	wallet := fs.String("wallet", "", "the controller wallet")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the agent's DID (see 'surety stake show -h')")
	}
	if _, err := identity.ParseDID(pos[0]); err != nil {
		return usagef("%v", err)
	}
	if !common.IsHexAddress(*wallet) {
		return usagef("--wallet: give the controller's address")
	}
	c, _, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	rec, err := c.StakeOf(ctx, pos[0], common.HexToAddress(*wallet))
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, rec)
	}
	printStake(e, pos[0], rec)
	return nil
}

func printStake(e *env, did string, r *wire.Holding) {
	if r == nil {
		return
	}
	tok := tokenName(r.Token)
	fmt.Fprintf(e.stdout, "%s under wallet %s: %s\n  staked     %s %s\n", did, r.Controller.Hex(), r.Status, formatAmount(r.Staked), tok)
	if r.Locked != "" && r.Locked != "0" {
		fmt.Fprintf(e.stdout, "  locked     %s %s of it, by claimed bounties and joined jobs until they end\n", formatAmount(r.Locked), tok)
	}
	if r.Unbonding != "0" {
		fmt.Fprintf(e.stdout, "  unbonding  %s %s, withdrawable from %s\n", formatAmount(r.Unbonding), tok,
			time.Unix(int64(r.UnlockAt), 0).UTC().Format(time.RFC3339))
	}
}

// ownStake is a stake command sent from the user's own wallet.
type ownStake struct {
	kind      stake.OpKind
	node, key string
	rpcURL    string
	amount    *big.Int
	asJSON    bool
	wallet    *ownWalletFlags
	timeout   time.Duration // for each receipt
}

// boundOnChain reports whether the node counts did as bound to wallet, so a stake need not
// sign the binding again (behind Clef each signature is a question to its user). When the
// node says so wrongly, the registry refuses the stake for want of a binding: nothing is lost.
func boundOnChain(ctx context.Context, node *client.Client, did string, wallet common.Address) bool {
	h, err := node.StakeOf(ctx, did, wallet)
	return err == nil && h.Status == wire.StakeBound
}

// runOwnStake signs and sends a stake op from the user's wallet (binding the agent first
// when the wallet has not), waits until the node has indexed it, and prints the node's view.
func runOwnStake(ctx context.Context, e *env, o ownStake) error {
	if o.key == "" {
		return usagef("--key is required")
	}
	k, err := readKeyFile(o.key)
	if err != nil {
		return err
	}
	what := "stake " + stakeCommands[o.kind].name
	sess, err := openOwn(ctx, e, o.wallet, o.node, o.rpcURL, what, o.timeout)
	if err != nil {
		return err
	}
	defer sess.Close()
	op := stake.Op{Kind: o.kind, Agent: identity.AgentID(k.DID.String()), Amount: o.amount}
	if o.kind == stake.OpStake && !boundOnChain(ctx, sess.node, k.DID.String(), sess.snd.Address()) {
		// The first stake from a wallet binds the agent to it: both keys sign the binding.
		b, err := signBinding(ctx, k, sess.wallet.signer, sess.info)
		if err != nil {
			return err
		}
		if op.Proof, err = json.Marshal(b); err != nil {
			return err
		}
	}
	svc := stake.NewService(stake.ServiceConfig{Chain: sess.chain, Registry: sess.contract("StakeRegistry")})
	res, err := svc.Run(ctx, sess.snd, op)
	if err != nil {
		return err
	}
	if err := waitIndexed(ctx, e, sess.node, res.Block, what); err != nil {
		return err
	}
	h, err := sess.node.StakeOf(ctx, k.DID.String(), sess.snd.Address())
	if err != nil {
		return err
	}
	if o.asJSON {
		return printJSON(e, wire.StakeResult{TxHash: res.TxHash, Block: res.Block, GasUsed: res.GasUsed, Stake: h})
	}
	printStake(e, k.DID.String(), h)
	return nil
}
