package auditor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Score computes the scores the leaves (the log's signed audits up to a head, in log order)
// give at time at (the head's epoch end) with these facts: reputation.ScoreLog, with each
// envelope's signatures checked at any age, and the ERC-8004 feedback at the facts' block
// imported by reputation's rule. Call it once per Facts.
func (f *Facts) Score(ctx context.Context, dep *contracts.Deployment, leaves [][]byte, at int64) (*reputation.LogScores, error) {
	staked, err := f.Stakes.StakedAgents(ctx)
	if err != nil {
		return nil, err
	}
	v := identity.NewVerifier(identity.VerifierConfig{})
	return reputation.ScoreLog(ctx, f.db, f.chain, reputation.LogScoring{Leaves: leaves, Verify: v.CheckArchived, Rules: f.Rules(dep),
		Staked: staked, At: at, Params: f.Params, Feedback: Feedback{Index: f.ERC8004}})
}

// anchorBatch is the blocks one query for anchors spans: what public JSON-RPCs (and a node's
// POST /v1/rpc) serve in one eth_getLogs.
const anchorBatch = 5000

// ErrNotAnchored reports a head whose size and root no RootAnchor event holds (yet).
var ErrNotAnchored = errors.New("auditor: the head is not anchored on chain")

// Anchor is where a head was first anchored on chain: the block whose facts its scores use.
type Anchor struct {
	Block uint64
	Tx    common.Hash
	Node  common.Address // the anchoring wallet
}

// FirstAnchor finds the first RootAnchor event in blocks from to to that anchors a log of
// size with root, by any wallet: from the deployment's block on, the same block for every node
// holding that log and every auditor reading that chain. It is ErrNotAnchored when there is
// none.
func FirstAnchor(ctx context.Context, c Chain, dep *contracts.Deployment, size uint64, root merkle.Hash, from, to uint64) (Anchor, error) {
	ra := contracts.NewRootAnchor()
	parsed, err := contracts.RootAnchorMetaData.ParseABI()
	if err != nil {
		return Anchor{}, err
	}
	topic := parsed.Events[contracts.RootAnchorAnchoredEventName].ID
	for from := max(from, dep.Block); from <= to; from += anchorBatch {
		logs, err := c.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(from), ToBlock: new(big.Int).SetUint64(min(from+anchorBatch-1, to)),
			Addresses: []common.Address{dep.Contracts.RootAnchor}, Topics: [][]common.Hash{{topic}, nil, {common.BigToHash(new(big.Int).SetUint64(size))}}})
		if err != nil {
			return Anchor{}, fmt.Errorf("auditor: read RootAnchor's events: %w", err)
		}
		for i := range logs {
			l := &logs[i]
			if l.Removed {
				continue
			}
			ev, err := ra.UnpackAnchoredEvent(l)
			if err != nil || ev.TreeSize != size || !bytes.Equal(ev.Root[:], root[:]) {
				continue
			}
			return Anchor{Block: l.BlockNumber, Tx: l.TxHash, Node: ev.Node}, nil
		}
	}
	return Anchor{}, fmt.Errorf("%w: no anchor of size %d with root %s up to block %d", ErrNotAnchored, size, root, to)
}
