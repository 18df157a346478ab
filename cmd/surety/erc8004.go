package main

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/txn"
)

func runERC8004Cmd(ctx context.Context, e *env, args []string) error {
	return runSubcommand(ctx, e, "erc8004", "register | publish | import | show", map[string]func(context.Context, *env, []string) error{
		"register": runERC8004Register,
		"publish":  runERC8004Publish,
		"import":   runERC8004Import,
		"show":     runERC8004Show,
	}, args)
}

const erc8004OwnWallet = `

Your own wallet sends the transaction (--keystore, --private-key, --signer URL --from ADDR,
or --dev-account N on a dev chain), to --rpc-url or through the node's JSON-RPC relay; the
command answers once the node has indexed it.`

func runERC8004Register(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "erc8004 register", "--did DID (--keystore FILE | --private-key KEY | --signer URL --from ADDR | --dev-account N) [--agent-wallet-private-key KEY | --agent-wallet-dev-account N] [--node URL]", strings.TrimSpace(`
Register an agent in the deployment's ERC-8004 IdentityRegistry: the wallet becomes the owner of
a new agent id whose agentURI is the node's registration file for the DID
(/v1/erc8004/registration/{did}: its card's name, A2A card, MCP endpoint and DID) and whose
on-chain metadata "did" names the DID. The node counts the agent as the DID's when the owner
(or the agent wallet) is a wallet bound to the DID ('surety did bind'). With
--agent-wallet-private-key or --agent-wallet-dev-account, that wallet signs its consent
(EIP-712) and becomes the agent's wallet.`)+erc8004OwnWallet)
	node := fs.nodeURL()
	fs.own = fs.ownWallet()
	fs.rpc = fs.rpcURL("the chain's JSON-RPC URL (default: through the node)")
	did := fs.String("did", "", "the agent's DID")
	agentURI := fs.String("agent-uri", "", "the agentURI to register (default: the registration file of the DID on --node; give the node's public URL's when --node is a local address)")
	walletKey := fs.String("agent-wallet-private-key", "", "a raw hex key whose wallet becomes the agent's wallet (it signs its consent)")
	walletDev := fs.Int("agent-wallet-dev-account", -1, "Anvil's test account N becomes the agent's wallet (dev chains)")
	timeout := fs.Duration("timeout", defaultWriteTimeout, "how long to wait for each transaction")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	if _, err := identity.ParseDID(*did); err != nil {
		return usagef("--did: %v", err)
	}
	var agentWallet txn.TypedDataSigner
	switch {
	case *walletKey != "" && *walletDev >= 0:
		return usagef("give one agent wallet")
	case *walletKey != "":
		k, err := crypto.HexToECDSA(strings.TrimPrefix(*walletKey, "0x"))
		if err != nil {
			return usagef("--agent-wallet-private-key: %v", err)
		}
		agentWallet = txn.NewKeySigner(k)
	case *walletDev >= 0:
		agentWallet = txn.NewKeySigner(chain.DevKey(*walletDev))
	}
	if *agentURI == "" {
		*agentURI = erc8004.RegistrationURL(*node, *did)
	}
	sess, err := openOwn(ctx, e, fs.own, *node, *fs.rpc, "erc8004 register", *timeout)
	if err != nil {
		return err
	}
	defer sess.Close()
	svc := erc8004.NewService(erc8004.ServiceConfig{Chain: sess.chain, ChainID: sess.info.Chain.ID,
		IdentityRegistry: sess.contract("IdentityRegistry"), ReputationRegistry: sess.contract("ReputationRegistry")})
	res, err := svc.Run(ctx, sess.snd, erc8004.Op{Kind: erc8004.OpRegister, AgentURI: *agentURI, DID: *did})
	if err != nil {
		return err
	}
	if agentWallet != nil {
		head, err := sess.chain.HeaderByNumber(ctx, nil)
		if err != nil {
			return err
		}
		deadline := head.Time + uint64(erc8004.MaxWalletDeadline.Seconds()) - 30
		sig, err := svc.WalletSignature(ctx, agentWallet, res.AgentID, sess.snd.Address(), deadline)
		if err != nil {
			return err
		}
		if res, err = svc.Run(ctx, sess.snd, erc8004.Op{Kind: erc8004.OpSetWallet, AgentID: res.AgentID, Wallet: agentWallet.Address(),
			Deadline: deadline, Signature: sig}); err != nil {
			return err
		}
	}
	if err := waitIndexed(ctx, e, sess.node, res.Block, "erc8004 register"); err != nil {
		return err
	}
	a, err := sess.node.ERC8004Agent(ctx, res.AgentID)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, a)
	}
	fmt.Fprintf(e.stdout, "agent %d in IdentityRegistry %s (chain %d)\n  owner     %s\n  wallet    %s\n  agentURI  %s\n  did       %s\n",
		a.ID, sess.contract("IdentityRegistry").Hex(), sess.info.Chain.ID, a.Owner.Hex(), a.Wallet.Hex(), a.URI, a.DID)
	return nil
}

func runERC8004Publish(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "erc8004 publish", "--subject DID --bounty ID --score 0.8 --leaf HEX [--size N] [--agent-id N] (own wallet flags) [--node URL]", strings.TrimSpace(`
Publish the audit of a settled bounty as ERC-8004 feedback (ReputationRegistry.giveFeedback) to
the subject's agent: value the score as a percentage with two decimals (0.8 is 8000,
valueDecimals 2), tag1 "surety/audit", tag2 "bounty:ID", feedbackURI the node's inclusion proof
of the audit in its log (/v1/log/proof/inclusion?leaf=…&size=…) and feedbackHash the audit's
leaf hash ('surety audit submit' prints it). The agent is the one the node counts as the
subject's (--agent-id picks one when there are several). The agent's owner and operators
cannot rate it.`)+erc8004OwnWallet)
	node := fs.nodeURL()
	fs.own = fs.ownWallet()
	fs.rpc = fs.rpcURL("the chain's JSON-RPC URL (default: through the node)")
	subject := fs.String("subject", "", "the audited agent's DID")
	bounty := fs.Uint64("bounty", 0, "the settled bounty the audit is of")
	score := fs.Float64("score", -1, "the audit's score, 0 to 1")
	leaf := fs.String("leaf", "", "the audit's leaf hash in the node's log (64 hex digits)")
	size := fs.Uint64("size", 0, "the log's tree size the proof is at (default: the node's latest head)")
	agentID := fs.Int64("agent-id", -1, "the subject's agent id (default: the one the node counts as the subject's)")
	timeout := fs.Duration("timeout", defaultWriteTimeout, "how long to wait for the transaction")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.parse(args); err != nil {
		return err
	}
	if _, err := identity.ParseDID(*subject); err != nil {
		return usagef("--subject: %v", err)
	}
	raw, err := hexBytes(*leaf)
	if err != nil || len(raw) != 32 {
		return usagef("--leaf: give the audit's leaf hash, 64 hex digits")
	}
	sess, err := openOwn(ctx, e, fs.own, *node, *fs.rpc, "erc8004 publish", *timeout)
	if err != nil {
		return err
	}
	defer sess.Close()
	id := uint64(max(*agentID, 0))
	if *agentID < 0 {
		d, err := sess.node.ERC8004DID(ctx, *subject)
		if err != nil {
			return err
		}
		if len(d.Agents) != 1 {
			return usagef("the node counts %d agent ids as %s's: name one with --agent-id", len(d.Agents), *subject)
		}
		id = d.Agents[0].ID
	}
	if *size == 0 {
		head, err := sess.node.LogHead(ctx)
		if err != nil {
			return err
		}
		*size = head.Size
	}
	h := common.BytesToHash(raw)
	fb, err := erc8004.AuditFeedback(*score, *bounty, erc8004.AuditProofURL(*node, h, *size), h)
	if err != nil {
		return usagef("%v", err)
	}
	svc := erc8004.NewService(erc8004.ServiceConfig{Chain: sess.chain, ChainID: sess.info.Chain.ID,
		IdentityRegistry: sess.contract("IdentityRegistry"), ReputationRegistry: sess.contract("ReputationRegistry")})
	res, err := svc.Run(ctx, sess.snd, erc8004.Op{Kind: erc8004.OpFeedback, AgentID: id, Feedback: fb})
	if err != nil {
		return err
	}
	if err := waitIndexed(ctx, e, sess.node, res.Block, "erc8004 publish"); err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "feedback %d to agent %d: %s%% (value %s, %d decimals), %s %s\n  feedbackURI   %s\n  feedbackHash  %s\n  tx            %s (block %d)\n",
		res.FeedbackIndex, id, formatFixed(fb.Value, fb.ValueDecimals), fb.Value, fb.ValueDecimals, fb.Tag1, fb.Tag2, fb.FeedbackURI, fb.FeedbackHash.Hex(), res.TxHash, res.Block)
	return nil
}

func hexBytes(s string) ([]byte, error) {
	return common.ParseHexOrString("0x" + strings.TrimPrefix(s, "0x"))
}

func runERC8004Import(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "erc8004 import", "DID [--node URL] [--json]", strings.TrimSpace(`
Show the ERC-8004 feedback the node holds for a DID: the agent ids it counts as the DID's (their
owner or agent wallet is bound to the DID), their unrevoked feedback in chain order, and the
agent ids that only claim the DID (their feedback is not the DID's), and what of it the
node's reputation counts: a separate, low-weight signal, only ratings (tag1 "starred" or none,
0-100) from wallets that settled value with the subject, the latest of each.`))
	node := fs.nodeURL()
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the DID (see 'surety erc8004 import -h')")
	}
	if _, err := identity.ParseDID(pos[0]); err != nil {
		return usagef("%v", err)
	}
	c, _, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	d, err := c.ERC8004DID(ctx, pos[0])
	if err != nil {
		return err
	}
	type agentFeedback struct {
		AgentID  uint64 `json:"agentId"`
		Feedback any    `json:"feedback"`
	}
	var all []agentFeedback
	for _, a := range d.Agents {
		fb, err := c.ERC8004Feedback(ctx, a.ID, false)
		if err != nil {
			return err
		}
		all = append(all, agentFeedback{AgentID: a.ID, Feedback: fb.Feedback})
		if !*asJSON {
			fmt.Fprintf(e.stdout, "agent %d (owner %s, wallet %s): %d feedback\n", a.ID, a.Owner.Hex(), a.Wallet.Hex(), len(fb.Feedback))
			for _, f := range fb.Feedback {
				fmt.Fprintf(e.stdout, "  #%d from %s: %s %s %s  block %d\n", f.FeedbackIndex, f.Client.Hex(), formatFixed(f.Value, f.ValueDecimals), f.Tag1, f.Tag2, f.Block)
			}
		}
	}
	rep, err := c.Reputation(ctx, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, map[string]any{"did": d.DID, "agents": d.Agents, "feedback": all, "claiming": d.Claiming,
			"imported": rep.Imported, "external": rep.External})
	}
	if len(d.Agents) == 0 {
		fmt.Fprintf(e.stdout, "no agent id is %s's on this node\n", pos[0])
	}
	for _, a := range d.Claiming {
		if !containsAgent(d.Agents, a.ID) {
			fmt.Fprintf(e.stdout, "agent %d claims the DID but its owner %s is not bound to it: its feedback is not the DID's\n", a.ID, a.Owner.Hex())
		}
	}
	if len(rep.Imported) == 0 {
		fmt.Fprintf(e.stdout, "counted in reputation: nothing (only starred or untagged ratings from wallets that settled value with the DID count)\n")
		return nil
	}
	fmt.Fprintf(e.stdout, "counted in reputation: %d, weight %.4f of %.4f\n", len(rep.Imported), rep.External, rep.Weight)
	for _, im := range rep.Imported {
		fmt.Fprintf(e.stdout, "  from %s: score %.4f, %.4f ETH settled with the DID, block %d\n", im.Client.Hex(), im.Score, im.Settled, im.Block)
	}
	return nil
}

func containsAgent(list []wire.ERC8004Agent, id uint64) bool {
	for _, a := range list {
		if a.ID == id {
			return true
		}
	}
	return false
}

// formatFixed writes a fixed-point value with decimals decimals (8000, 2: "80.00").
func formatFixed(v *big.Int, decimals uint8) string {
	if v == nil {
		return "0"
	}
	s := new(big.Int).Abs(v).String()
	if decimals > 0 {
		for len(s) <= int(decimals) {
			s = "0" + s
		}
		s = s[:len(s)-int(decimals)] + "." + s[len(s)-int(decimals):]
	}
	if v.Sign() < 0 {
		s = "-" + s
	}
	return s
}

func runERC8004Show(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "erc8004 show", "AGENT_ID [--node URL] [--revoked] [--json]", "Show an agent of the ERC-8004 identity registry and its feedback, as the node indexes them.")
	node := fs.nodeURL()
	revoked := fs.Bool("revoked", false, "list revoked feedback too")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give the agent id (see 'surety erc8004 show -h')")
	}
	id, err := strconv.ParseUint(pos[0], 10, 63)
	if err != nil {
		return usagef("agent id %q is not a number", pos[0])
	}
	c, _, err := dialNode(ctx, *node)
	if err != nil {
		return err
	}
	a, err := c.ERC8004Agent(ctx, id)
	if err != nil {
		return err
	}
	fb, err := c.ERC8004Feedback(ctx, id, *revoked)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, map[string]any{"agent": a, "feedback": fb.Feedback})
	}
	fmt.Fprintf(e.stdout, "agent %d\n  owner     %s\n  wallet    %s\n  agentURI  %s\n  did       %s\n  feedback  %d\n", a.ID, a.Owner.Hex(), a.Wallet.Hex(), a.URI, a.DID, len(fb.Feedback))
	for _, f := range fb.Feedback {
		state := ""
		if f.Revoked {
			state = " (revoked)"
		}
		fmt.Fprintf(e.stdout, "  #%d from %s: %s %s %s%s\n", f.FeedbackIndex, f.Client.Hex(), formatFixed(f.Value, f.ValueDecimals), f.Tag1, f.Tag2, state)
	}
	return nil
}
