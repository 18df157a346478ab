package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// Adapters that let reputation's rules read the escrow index, the identity bindings and the
// registry, which it may not import.

// escrowFacts reads bounties from the escrow index.
type escrowFacts struct{ index *escrow.Indexer }

func (e escrowFacts) Bounty(ctx context.Context, id uint64) (reputation.BountyFacts, bool, error) {
	b, err := e.index.Get(ctx, id)
	if errors.Is(err, escrow.ErrUnknownBounty) {
		return reputation.BountyFacts{}, false, nil
	}
	if err != nil {
		return reputation.BountyFacts{}, false, err
	}
	finished := false
	switch b.Status {
	case escrow.StatusAccepted, escrow.StatusReleased, escrow.StatusResolved, escrow.StatusRefunded:
		finished = true
	}
	amount, _ := new(big.Int).SetString(b.Amount, 10)
	fee, _ := new(big.Int).SetString(b.Fee, 10)
	return reputation.BountyFacts{Finished: finished, Poster: b.Poster, Arbiter: b.Arbiter, Worker: b.Worker, Amount: amount, Fee: fee}, true, nil
}

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
	_ reputation.Bounties    = escrowFacts{}
	_ reputation.Agents      = knownAgents{}
	_ reputation.Wallets     = (*stake.Index)(nil)
	_ reputation.StakeSource = (*registry.Registry)(nil)
)

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
func anchorFor(cfg nodeConfig, kind string, tx *txn.Service, dep *contracts.Deployment, log *slog.Logger) (reputation.Anchorer, error) {
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
