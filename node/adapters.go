package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// Adapters that let reputation's rules read the escrow index, the identity bindings and the
// registry, which it may not import.

// groupGate reserves group ids of the form bounty-N for bounty N's poster and worker: only a
// DID bound (on chain, with a verified proof) to one of their wallets may create the group.
type groupGate struct {
	bounties *escrow.Indexer
	stakes   *stake.Index
}

func (g groupGate) mayCreate(ctx context.Context, id, sender string) error {
	n, ok := strings.CutPrefix(id, "bounty-")
	if !ok {
		return nil
	}
	bid, err := strconv.ParseUint(n, 10, 64)
	if err != nil || bid == 0 {
		return nil // not a bounty's id: bounty-x is anyone's
	}
	b, err := g.bounties.Get(ctx, bid)
	if errors.Is(err, escrow.ErrUnknownBounty) {
		return &groups.Error{Kind: groups.ErrReservedGroup, Detail: fmt.Sprintf("group %s is bounty %d's, which this node has not indexed", id, bid)}
	}
	if err != nil {
		return err
	}
	for _, w := range []common.Address{b.Poster, b.Worker} {
		if w == (common.Address{}) {
			continue
		}
		if ok, err := g.stakes.Bound(ctx, sender, w); err != nil || ok {
			return err
		}
	}
	return &groups.Error{Kind: groups.ErrReservedGroup, Detail: fmt.Sprintf("group %s is for bounty %d's poster and worker", id, bid)}
}

// bound says whether a wallet binds did on chain (a verified binding of a DID no controller
// closed): only such DIDs create groups, and a bound creator admits the members it names.
func (g groupGate) bound(ctx context.Context, did string) (bool, error) {
	wallets, err := g.stakes.WalletsOf(ctx, did)
	return len(wallets) > 0, err
}

// knownAgents knows an agent with a card in the registry or a wallet binding on chain.
type knownAgents struct {
	cards  *registry.Registry
	stakes *stake.Index
}

func (k knownAgents) Known(ctx context.Context, did string) (bool, error) {
	if ok, err := k.cards.Known(ctx, did); err != nil || ok {
		return ok, err
	}
	wallets, err := k.stakes.WalletsOf(ctx, did)
	return len(wallets) > 0, err
}

var (
	_ reputation.Agents      = knownAgents{}
	_ reputation.Wallets     = (*stake.Index)(nil)
	_ reputation.StakeSource = (*registry.Registry)(nil)
	_ reputation.Nodes       = stakedNodes{}
	_ reputation.Anchors     = chainAnchors{}
)

// stakedNodes are the DIDs bound on chain with at least the deployment's minimum stake: the
// nodes whose log heads count (reputation.Nodes).
type stakedNodes struct {
	stakes *stake.Index
	min    *big.Int
}

func (n stakedNodes) Node(ctx context.Context, did string) (common.Address, bool, error) {
	return n.stakes.Node(ctx, did, n.min)
}

// chainAnchors reads the roots RootAnchor holds (reputation.Anchors).
type chainAnchors struct {
	chain    bind.ContractBackend
	contract common.Address
	abi      *contracts.RootAnchor
}

func (a chainAnchors) RootAt(ctx context.Context, wallet common.Address, size uint64) (merkle.Hash, error) {
	root, err := bind.Call(a.abi.Instance(a.chain, a.contract), &bind.CallOpts{Context: ctx}, a.abi.PackRootAt(wallet, size), a.abi.UnpackRootAt)
	return merkle.Hash(root), err
}

// chainAnchor anchors audit-log heads in RootAnchor from a wallet the node holds.
type chainAnchor struct {
	tx       *txn.Service
	from     common.Address
	contract common.Address
	abi      *contracts.RootAnchor
}

func (a chainAnchor) Anchor(ctx context.Context, size uint64, root merkle.Hash) (string, error) {
	r, err := a.tx.Transact(ctx, a.from, txn.Call{To: a.contract, Data: a.abi.PackAnchor(size, root)})
	if stale, ok := contracts.Revert[contracts.RootAnchorStaleTreeSize](err); ok {
		return "", fmt.Errorf("%w: the chain holds size %d, this head has %d", reputation.ErrStaleAnchor, stale.Latest, stale.Given)
	}
	if err != nil {
		return "", err
	}
	return r.TxHash.Hex(), nil
}

// anchorFor picks the wallet that anchors the audit log: --anchor-wallet (which the node must
// hold), else dev account 0 where the node holds the dev wallets, else none.
func anchorFor(cfg Config, kind string, tx *txn.Service, dep *contracts.Deployment, log *slog.Logger) (reputation.Anchorer, error) {
	from := common.HexToAddress(cfg.AnchorWallet)
	switch {
	case cfg.AnchorWallet != "":
		if !tx.HasWallet(from) {
			return nil, fmt.Errorf("--anchor-wallet %s: the node holds no such wallet (see 'surety wallet')", from.Hex())
		}
	case kind == "embedded" || cfg.DevWallets:
		from = crypto.PubkeyToAddress(chain.DevKey(0).PublicKey)
	default:
		log.Warn("the audit log is not anchored on chain: give --anchor-wallet")
		return nil, nil
	}
	log.Info("anchoring the audit log", "wallet", from.Hex(), "contract", dep.Contracts.RootAnchor.Hex())
	return chainAnchor{tx: tx, from: from, contract: dep.Contracts.RootAnchor, abi: contracts.NewRootAnchor()}, nil
}

// registerNode returns what makes the node's DID a staked node on chain, so that other nodes
// count the log heads it signs (reputation.Nodes): bound to the anchoring wallet and staked at
// the deployment's minimum (which buys no pre-trust: the stake above the minimum does), from
// that wallet. The node runs it while it runs, after catching its stake index up. It does so on dev chains by
// default (--register-node auto), anywhere with yes, never with no (nil: nothing to run); a
// node whose DID is not a staked node still keeps and serves its log, but no other node
// adopts an epoch on its word.
func (st *startup) registerNode(anchorer reputation.Anchorer) (func(context.Context) error, error) {
	cfg, log := st.cfg, st.log
	a, anchors := anchorer.(chainAnchor)
	switch {
	case cfg.RegisterNode == "no", cfg.RegisterNode != "yes" && (!devChain(st.kind, st.id.ChainID.Uint64()) || !anchors):
		log.Warn("the node's DID is not a staked node unless it is staked on chain (surety stake add, or --register-node yes): until it is, no node adopts log epochs on its word, and it adopts none unless staked peers sign them",
			"did", st.ids.NodeDID(), "min_stake", st.minStake)
		return nil, nil
	case !anchors:
		return nil, fmt.Errorf("--register-node: the node anchors from no wallet it holds, so it has none to stake its DID from: give --anchor-wallet")
	}
	return func(ctx context.Context) error { return st.stakeNode(ctx, a.from) }, nil
}

// stakeNode binds the node's DID to wallet from and stakes the minimum for it, unless it is a
// staked node already.
func (st *startup) stakeNode(ctx context.Context, from common.Address) error {
	did := st.ids.NodeDID()
	// The index first: one that lags the chain after a restart would say the node is not
	// staked yet, and the node would stake again.
	if err := st.stakes.CatchUp(ctx); err != nil {
		return err
	}
	if _, ok, err := (stakedNodes{stakes: st.stakes, min: st.minStake}).Node(ctx, did); err != nil || ok {
		return err
	}
	key, _, err := st.keys.NodeKey(ctx)
	if err != nil {
		return err
	}
	op := stake.Op{Kind: stake.OpStake, From: from, Agent: identity.AgentID(did), Amount: new(big.Int).Set(st.minStake)}
	if op.Amount.Sign() == 0 {
		op.Amount.SetInt64(1) // no minimum: any stake makes a node
	}
	bound, err := st.stakes.Bound(ctx, did, from)
	if err != nil {
		return err
	}
	if !bound {
		b, err := identity.SignBindingWith(identity.BindingStatement{DID: did, Wallet: from, ChainID: st.id.ChainID.Uint64(),
			Registry: st.dep.Contracts.StakeRegistry, IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()},
			key, func(data apitypes.TypedData) ([]byte, error) { return st.txs.SignTypedData(ctx, from, data) })
		if err != nil {
			return fmt.Errorf("register the node: sign its binding: %w", err)
		}
		if op.Proof, err = json.Marshal(b); err != nil {
			return err
		}
	}
	// Once per DID and wallet: a stake mined but not yet confirmed in the index, or one whose
	// broadcast timed out, is waited for on a retry, never sent again.
	res, err := st.staking.Do(ctx, op, txn.Idempotency{Caller: did, Key: "register-node", Fingerprint: from.Hex()})
	if err != nil {
		return fmt.Errorf("register the node: stake its DID from %s: %w", from.Hex(), err)
	}
	st.log.Info("the node's DID is a staked node on chain: other nodes count its log heads", "did", did, "wallet", from.Hex(), "stake", op.Amount, "tx", res.TxHash)
	return nil
}

// registerOnChain runs n.register until it succeeds (a busy chain, a wallet out of funds a
// faucet may fill), every registerRetry, until ctx ends.
func (n *Node) registerOnChain(ctx context.Context) error {
	if n.register == nil {
		return nil
	}
	for {
		err := n.register(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		n.cfg.Logger.Warn("the node's DID is not a staked node yet: other nodes do not adopt log epochs on its word", "err", err, "retry_in", registerRetry)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(registerRetry):
		}
	}
}
