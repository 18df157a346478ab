package reputation_test

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

type fakeChain struct {
	bounties map[uint64]reputation.BountyFacts
	wallets  map[string]common.Address
	agents   map[string]bool
	// nodes are the DIDs staked as nodes, for the sync nodes on this chain (nil: every DID
	// is), and quorum the quorum those nodes require (0: 1).
	nodes  map[string]bool
	quorum int
	// anchors are the roots anchored on chain, by wallet and size.
	anchors map[common.Address]map[uint64]merkle.Hash
}

func (f *fakeChain) Node(_ context.Context, did string) (common.Address, bool, error) {
	return f.wallets[did], f.nodes == nil || f.nodes[did], nil
}

func (f *fakeChain) RootAt(_ context.Context, wallet common.Address, size uint64) (merkle.Hash, error) {
	return f.anchors[wallet][size], nil
}

func (f *fakeChain) Bounty(_ context.Context, id uint64) (reputation.BountyFacts, bool, error) {
	b, ok := f.bounties[id]
	return b, ok, nil
}

func (f *fakeChain) WalletsOf(_ context.Context, did string) ([]common.Address, error) {
	if w, ok := f.wallets[did]; ok {
		return []common.Address{w}, nil
	}
	return nil, nil
}

func (f *fakeChain) Known(_ context.Context, did string) (bool, error) { return f.agents[did], nil }

func TestAcceptanceRules(t *testing.T) {
	const other = "did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH"
	poster, arbiter, worker, stranger := common.HexToAddress("0xa1"), common.HexToAddress("0xa2"), common.HexToAddress("0xa3"), common.HexToAddress("0xa4")
	escrowAddr := common.HexToAddress(escrow)
	f := &fakeChain{
		bounties: map[uint64]reputation.BountyFacts{
			// 2 ETH, 0.01 ETH of fee: settled 2 + 200 × 0.01 = 4.
			7: {Finished: true, Poster: poster, Arbiter: arbiter, Worker: worker, Amount: big.NewInt(2e18), Fee: big.NewInt(1e16)},
			8: {Finished: false, Poster: poster, Arbiter: arbiter, Worker: worker, Amount: big.NewInt(2e18)},
			// The subject posted it; 0.5 ETH, no fee.
			9: {Finished: true, Poster: worker, Arbiter: arbiter, Worker: poster, Amount: big.NewInt(5e17), Fee: new(big.Int)},
		},
		wallets: map[string]common.Address{subject: worker},
		agents:  map[string]bool{subject: true, auditor: true},
	}
	rules := &reputation.Rules{ChainID: 1337, Escrow: escrowAddr, Bounties: f, Wallets: f, Agents: f}
	onBounty := func(id uint64) *reputation.Audit {
		return &reputation.Audit{Auditor: auditor, Subject: subject, Score: 1, Bounty: &identity.BountyRef{ChainID: 1337, Escrow: escrowAddr.Hex(), ID: id}}
	}
	tests := []struct {
		name          string
		auditorWallet common.Address // zero: unbound
		audit         *reputation.Audit
		side          reputation.Side
		err           error
	}{
		{"the poster audits the worker of a finished bounty", poster, onBounty(7), reputation.SidePoster, nil},
		{"the worker audits the poster of a finished bounty", poster, onBounty(9), reputation.SideWorker, nil},
		{"the arbiter is no side: unbacked", arbiter, onBounty(7), reputation.SideNone, nil},
		{"a stranger's audit counts unbacked", stranger, onBounty(7), reputation.SideNone, nil},
		{"an unbound auditor's audit counts unbacked", common.Address{}, onBounty(7), reputation.SideNone, nil},
		{"an unfinished bounty backs nothing", poster, onBounty(8), reputation.SideNone, nil},
		{"an audit of an envelope is unbacked", poster, &reputation.Audit{Auditor: auditor, Subject: subject, Score: 1, Envelope: "m"}, reputation.SideNone, nil},
		{"unknown bounty", poster, onBounty(10), reputation.SideNone, reputation.ErrUnknownBounty},
		{"bounty on another chain", poster, &reputation.Audit{Auditor: auditor, Subject: subject, Bounty: &identity.BountyRef{ChainID: 1, Escrow: escrowAddr.Hex(), ID: 7}}, reputation.SideNone, reputation.ErrForeignBounty},
		{"bounty on another escrow", poster, &reputation.Audit{Auditor: auditor, Subject: subject, Bounty: &identity.BountyRef{ChainID: 1337, Escrow: stranger.Hex(), ID: 7}}, reputation.SideNone, reputation.ErrForeignBounty},
		{"unknown subject", poster, &reputation.Audit{Auditor: auditor, Subject: other, Envelope: "m"}, reputation.SideNone, reputation.ErrUnknownSubject},
		{"auditor on the subject's wallet", worker, onBounty(7), reputation.SideNone, reputation.ErrSameWallet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			delete(f.wallets, auditor)
			if tt.auditorWallet != (common.Address{}) {
				f.wallets[auditor] = tt.auditorWallet
			}
			v, err := rules.Check(context.Background(), tt.audit)
			settled := map[reputation.Side]float64{reputation.SidePoster: 4, reputation.SideWorker: 0.5}[tt.side]
			if !errors.Is(err, tt.err) || (err != nil) != (tt.err != nil) || v.Side != tt.side || v.Settled != settled {
				t.Errorf("Check = %+v, %v; want side %q settled %g, %v", v, err, tt.side, settled, tt.err)
			}
		})
	}
}
