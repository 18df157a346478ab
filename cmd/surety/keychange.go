package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/stake"
)

// keyChangeWallets is what did revoke and did rotate say of the wallet they act from.
const keyChangeWallets = `

The wallet must be one that bound the DID on chain ('surety did bind'). Your own wallet
(--keystore, --private-key, --signer URL --from ADDR, or --dev-account N on a dev chain): the
CLI signs and sends the call itself, to --rpc-url or through the node's JSON-RPC relay, shows
it as it goes (sent, mined, indexed by the node), and needs no --key, only the DID. A wallet
the node holds (--wallet ADDR): the request is an envelope signed by --key, and the node
sends the call. Either way the command answers once the node's index has the change.`

func runDIDRevoke(ctx context.Context, e *env, args []string) error {
	fs, node, key, wallet, asJSON := signerFlags(e, "did revoke", "(--key KEYFILE | DID) (--keystore FILE | --private-key KEY | --signer URL --from ADDR | --wallet ADDR) [--node URL] [--rpc-url URL]", strings.TrimSpace(`
Revoke a DID on chain (StakeRegistry.revoke) from a wallet that bound it. Every node follows
the registry and, within a block or two, refuses the DID's envelopes, cards, audits and group
posts, and resolves it as deactivated; no call to any node is needed. It is final: to move an
agent to a new key instead, use 'surety did rotate'. The DID's stake stops counting but can
still be unbonded and withdrawn from your own wallet ('surety stake unbond'). A lost or
stolen key is revoked from your own wallet by naming the DID.`)+keyChangeWallets)
	fs.own = fs.ownWallet()
	fs.rpc = fs.rpcURL("the chain's JSON-RPC URL, to send from your own wallet (default: through the node)")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	return runKeyChange(ctx, e, fs, keyChange{kind: stake.OpRevoke, node: *node, keyFile: *key, wallet: *wallet, pos: pos, asJSON: *asJSON})
}

func runDIDRotate(ctx context.Context, e *env, args []string) error {
	fs, node, key, wallet, asJSON := signerFlags(e, "did rotate", "(--key KEYFILE | DID) --to NEWKEYFILE (--keystore FILE | --private-key KEY | --signer URL --from ADDR | --wallet ADDR) [--node URL] [--rpc-url URL]", strings.TrimSpace(`
Move an agent to a new key (StakeRegistry.rotate): a did:key cannot change its key, so the
wallet that bound it records that its successor is the DID of --to, a key file you make first
with 'surety did new --out FILE'. The successor's binding to the wallet is the rotation's
proof, signed like any binding: by the new key, and by the wallet (EIP-712; a wallet the node
holds is signed by the node). The stake moves to the successor; every node counts it once the
binding verifies, refuses the old DID's envelopes from then on, and resolves it as
deactivated, naming the successor. Stake that claimed bounties lock cannot rotate until they
end.`)+keyChangeWallets)
	fs.own = fs.ownWallet()
	fs.rpc = fs.rpcURL("the chain's JSON-RPC URL, to send from your own wallet (default: through the node)")
	to := fs.String("to", "", "the successor's key file (from 'surety did new --out FILE'): the agent moves to its DID")
	pos, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if *to == "" {
		return usagef("--to is required: the new key file (make it with 'surety did new --out FILE')")
	}
	next, err := readKeyFile(*to)
	if errors.Is(err, os.ErrNotExist) {
		return usagef("--to %s: no such key file; make the new key first with 'surety did new --out %s'", *to, *to)
	}
	if err != nil {
		return err
	}
	return runKeyChange(ctx, e, fs, keyChange{kind: stake.OpRotate, node: *node, keyFile: *key, wallet: *wallet, pos: pos, next: next, asJSON: *asJSON})
}

// keyChange is a did revoke or did rotate as its command line gave it.
type keyChange struct {
	kind    stake.OpKind
	node    string
	keyFile string        // --key: the DID's key
	wallet  string        // --wallet: a wallet the node holds
	pos     []string      // the DID, instead of --key
	next    *identity.Key // the successor's key (rotate)
	asJSON  bool
}

// runKeyChange revokes or rotates the DID from the wallet named, and prints the change once
// the node's index has it.
func runKeyChange(ctx context.Context, e *env, fs *flags, kc keyChange) error {
	k, did, err := keyChangeDID(kc)
	if err != nil {
		return err
	}
	if kc.next != nil && kc.next.DID.String() == did {
		return usagef("--to is the key of %s itself: rotate to a new key ('surety did new --out FILE')", did)
	}
	own, err := ownOrNode(fs, kc.wallet)
	if err != nil {
		return err
	}
	var ans *txAnswer
	var from common.Address
	if own {
		ans, from, err = changeKeyFromOwnWallet(ctx, e, fs, kc, did)
	} else {
		if k == nil {
			return usagef("acting from a wallet the node holds (--wallet), the DID's --key signs the request; your own wallet (--keystore, --private-key, --signer) needs only the DID")
		}
		ans, from, err = changeKeyThroughNode(ctx, e, fs, kc, k)
	}
	if err != nil {
		return err
	}
	if kc.asJSON {
		return printJSON(e, ans)
	}
	if kc.kind == stake.OpRevoke {
		fmt.Fprintf(e.stdout, "revoked %s under wallet %s on chain (block %d, tx %s): every node refuses its envelopes from now on\n", did, from.Hex(), ans.Block, ans.TxHash)
		return nil
	}
	fmt.Fprintf(e.stdout, "rotated %s to %s under wallet %s on chain (block %d, tx %s): the new key acts from now on, the old one is refused\n",
		did, kc.next.DID, from.Hex(), ans.Block, ans.TxHash)
	printStake(e, kc.next.DID.String(), ans.Stake)
	return nil
}

// keyChangeDID is the DID a key change closes: --key's (returned with the key), or the one
// named on the command line.
func keyChangeDID(kc keyChange) (*identity.Key, string, error) {
	verb := string(kc.kind)
	switch {
	case len(kc.pos) > 1:
		return nil, "", usagef("give one DID to %s (see 'surety did %s -h')", verb, verb)
	case kc.keyFile != "" && len(kc.pos) == 1:
		return nil, "", usagef("give --key or the DID, not both")
	case kc.keyFile != "":
		k, err := readKeyFile(kc.keyFile)
		if err != nil {
			return nil, "", err
		}
		return k, k.DID.String(), nil
	case len(kc.pos) == 1:
		d, err := identity.ParseDID(kc.pos[0])
		if err != nil {
			return nil, "", usagef("%v", err)
		}
		if d.Method != "key" {
			return nil, "", usagef("%s is not a did:key: only an agent's did:key is bound, so only it can be %sd", kc.pos[0], verb)
		}
		return nil, d.String(), nil
	}
	return nil, "", usagef("name the DID to %s: --key KEYFILE, or the DID itself (from your own wallet)", verb)
}

// checkController refuses, before anything is signed or sent, a key change the registry
// would refuse for wallet's record of did (read from the chain through the node), saying what
// to do instead.
func checkController(ctx context.Context, c *client.Client, kind stake.OpKind, did string, wallet common.Address, next *identity.Key) error {
	h, err := c.StakeOf(ctx, did, wallet)
	if err != nil {
		return err
	}
	switch h.Status {
	case wire.StakeNone:
		return fmt.Errorf("wallet %s is not a controller of %s on chain (it never bound it): %s from the wallet that bound it, or bind this one first ('surety did bind')", wallet.Hex(), did, kind)
	case wire.StakeRevoked:
		return fmt.Errorf("%s is already revoked under wallet %s: nothing sent", did, wallet.Hex())
	case wire.StakeRotated:
		return fmt.Errorf("%s is already rotated away under wallet %s: nothing sent ('surety agent status %s' names its successor, which acts now)", did, wallet.Hex(), did)
	}
	if kind != stake.OpRotate {
		return nil
	}
	if h.Locked != "" && h.Locked != "0" {
		return fmt.Errorf("%s has %s %s of its stake locked by claimed bounties under wallet %s: it can rotate once they end", did, formatAmount(h.Locked), tokenName(h.Token), wallet.Hex())
	}
	n, err := c.StakeOf(ctx, next.DID.String(), wallet)
	if err != nil {
		return err
	}
	if n.Status != wire.StakeNone {
		return fmt.Errorf("--to: %s is already %s under wallet %s: rotate to a fresh key ('surety did new --out FILE')", next.DID, n.Status, wallet.Hex())
	}
	return nil
}

// changeKeyThroughNode has the node send the change from a wallet it holds: an envelope
// signed by k, which for a rotation carries the new key's half of the successor's binding
// (the node signs the wallet's half).
func changeKeyThroughNode(ctx context.Context, e *env, fs *flags, kc keyChange, k *identity.Key) (*txAnswer, common.Address, error) {
	s, err := newSigner(ctx, fs, kc.node, kc.keyFile, kc.wallet, kc.asJSON)
	if err != nil {
		return nil, common.Address{}, err
	}
	if err := checkController(ctx, s.node, kc.kind, k.DID.String(), s.wallet, kc.next); err != nil {
		return nil, s.wallet, err
	}
	var body any = api.RevokeBody{Op: string(kc.kind), Wallet: s.wallet}
	if kc.kind == stake.OpRotate {
		st := successorStatement(kc.next, s.wallet, s.info)
		jws, err := identity.SignBindingAgent(st, kc.next)
		if err != nil {
			return nil, s.wallet, err
		}
		body = api.RotateBody{Op: string(kc.kind), Wallet: s.wallet, Successor: wire.BindingStatement(st), SuccessorJWS: jws}
	}
	res, err := s.send(ctx, e, client.KeyChangePaths[wire.StakeOp(kc.kind)], 0, body, "did "+string(kc.kind))
	return res, s.wallet, err
}

// changeKeyFromOwnWallet signs and sends the change from the user's own wallet (for a
// rotation, both halves of the successor's binding: the new key's and the wallet's), waits
// until the node has indexed it, and reads the DID's key status there.
func changeKeyFromOwnWallet(ctx context.Context, e *env, fs *flags, kc keyChange, did string) (*txAnswer, common.Address, error) {
	what := "did " + string(kc.kind)
	sess, err := openOwn(ctx, e, fs.own, kc.node, *fs.rpc, what, *fs.timeout)
	if err != nil {
		return nil, common.Address{}, err
	}
	defer sess.Close()
	from := sess.snd.Address()
	if err := checkController(ctx, sess.node, kc.kind, did, from, kc.next); err != nil {
		return nil, from, err
	}
	op := stake.Op{Kind: kc.kind, Agent: identity.AgentID(did)}
	if kc.kind == stake.OpRotate {
		b, err := signBinding(ctx, kc.next, sess.wallet.signer, sess.info) // the new key's and the wallet's halves
		if err != nil {
			return nil, from, err
		}
		if op.Proof, err = json.Marshal(b); err != nil {
			return nil, from, err
		}
		op.Successor = identity.AgentID(kc.next.DID.String())
	}
	svc := stake.NewService(stake.ServiceConfig{Chain: sess.chain, Registry: sess.contract("StakeRegistry")})
	res, err := svc.Run(ctx, sess.snd, op)
	if err != nil {
		return nil, from, err
	}
	if err := waitIndexed(ctx, e, sess.node, res.Block, what); err != nil {
		return nil, from, fmt.Errorf("transaction %s was mined in block %d, but %w", res.TxHash, res.Block, err)
	}
	ans := &txAnswer{BountyResult: wire.BountyResult{TxHash: res.TxHash, Block: res.Block, GasUsed: res.GasUsed}}
	if res.Stake != nil {
		ans.Stake = new(wire.Holding)
		if err := recode(res.Stake, ans.Stake); err != nil {
			return nil, from, err
		}
	}
	if st, err := sess.node.CheckAgentStatus(ctx, did); err == nil {
		ans.Key = &wire.KeyState{DID: st.DID, Status: st.Status, Successor: st.Successor}
	}
	return ans, from, nil
}

// successorStatement is the binding statement of a rotation's successor: next's DID and
// wallet, on the node's chain and stake registry.
func successorStatement(next *identity.Key, wallet common.Address, info api.Info) identity.BindingStatement {
	return identity.BindingStatement{DID: next.DID.String(), Wallet: wallet, ChainID: info.Chain.ID,
		Registry: common.HexToAddress(info.Contracts["StakeRegistry"]), IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}
}
