package main

import (
	"context"
	"errors"

	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
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
	return reputation.BountyFacts{Finished: finished, Poster: b.Poster, Arbiter: b.Arbiter, Worker: b.Worker}, true, nil
}

// knownAgents knows an agent with a card in the registry or a wallet binding on this node.
type knownAgents struct {
	cards *registry.Registry
	ids   *identity.Service
}

func (k knownAgents) Known(ctx context.Context, did string) (bool, error) {
	if ok, err := k.cards.Known(ctx, did); err != nil || ok {
		return ok, err
	}
	wallets, err := k.ids.WalletsOf(ctx, did)
	return len(wallets) > 0, err
}

var (
	_ reputation.Bounties    = escrowFacts{}
	_ reputation.Agents      = knownAgents{}
	_ reputation.Wallets     = (*identity.Service)(nil)
	_ reputation.StakeSource = (*registry.Registry)(nil)
)
