package auditor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// CheckConfig says whose scores to check, against which chain.
type CheckConfig struct {
	// Node is the node whose published scores are checked.
	Node *client.Client
	// Chain is the auditor's own JSON-RPC: the chain's facts and anchors come from it, never
	// from the node.
	Chain Chain
	// NodeDID pins the node's DID (""; taken from the node's /v1/info).
	NodeDID string
	// Deployment pins the contracts (nil: the node's /v1/info names them; the chain id must
	// be the auditor's chain's).
	Deployment *contracts.Deployment
	// Size is the anchored head to check (0: the latest the node scored).
	Size uint64
	// DID, when set, is the agent whose scores must be published and match; every agent's
	// published scores are compared in any case.
	DID string
	// Dir holds the scratch database ("": the system's temporary directory).
	Dir string
	// Progress, when set, receives one line per step.
	Progress func(string)
}

// Report is what Check found. Mismatches is empty when the node's published scores are the
// recomputed ones, bit for bit.
type Report struct {
	Size   uint64
	Epoch  int64
	Root   merkle.Hash
	At     int64
	Anchor Anchor
	Agents int // agents whose scores were compared
	Audits int // audits that count
	// Checks are the lines of what held, in order.
	Checks     []string
	Mismatches []Mismatch
	// Subject is the checked DID's recomputed scores (CheckConfig.DID), when set.
	Subject *reputation.HeadScore
}

// Mismatch is one published figure that the log and the chain do not give.
type Mismatch struct {
	DID   string
	Field string // score, confidence, weight, standing, relative; "agent" for one missing on one side
	// Node is what the node published, Recomputed what the log and the chain give (NaN where
	// one side has no such agent).
	Node, Recomputed float64
}

// String names the agent and the figure, and both values.
func (m Mismatch) String() string {
	if m.Field == "agent" {
		if math.IsNaN(m.Node) {
			return fmt.Sprintf("%s: the node publishes no scores for it, the log gives some", m.DID)
		}
		return fmt.Sprintf("%s: the node publishes scores for it, the log gives none", m.DID)
	}
	return fmt.Sprintf("%s: %s published %v, recomputed %v", m.DID, m.Field, m.Node, m.Recomputed)
}

// ErrLogMismatch reports leaves, a head or an anchor that do not agree: the node's log is not
// the one it signed or anchored, so its scores cannot be checked.
var ErrLogMismatch = errors.New("auditor: the node's log does not match")

// Check recomputes the scores of one of the node's anchored heads and compares them with what
// the node publishes (GET /v1/log/scores):
//  1. the node's published scores of the head (every page);
//  2. every leaf up to the head (GET /v1/log/leaves): each envelope's hash is its leaf, and
//     the leaves give the head's root, which the node signed (its DID) and which a RootAnchor
//     event holds on the auditor's chain; the first such event's block is the node's stated one;
//  3. the chain's facts at that block, replayed from the auditor's chain (ReadFacts);
//  4. the scores (Facts.Score) at the node's stated time, which must be its epoch's end and
//     before the signed head closed; every agent's five figures compared with ==.
func Check(ctx context.Context, cfg CheckConfig) (*Report, error) {
	say := func(format string, args ...any) string {
		line := fmt.Sprintf(format, args...)
		if cfg.Progress != nil {
			cfg.Progress(line)
		}
		return line
	}
	info, err := cfg.Node.Info(ctx)
	if err != nil {
		return nil, err
	}
	nodeDID := cfg.NodeDID
	if nodeDID == "" {
		nodeDID = info.NodeDID
	}
	dep, err := deploymentOf(ctx, cfg, info)
	if err != nil {
		return nil, err
	}
	published, err := publishedScores(ctx, cfg.Node, cfg.Size)
	if err != nil {
		return nil, err
	}
	rep := &Report{Size: published.Size, Epoch: published.Epoch, Root: published.Root, At: published.At}
	rep.Checks = append(rep.Checks, say("read: the node's scores of %d agents at head %d (epoch %d), computed at %d with the facts of block %d",
		len(published.Scores), published.Size, published.Epoch, published.At, published.Block))

	raws, head, err := readLeaves(ctx, cfg.Node, published.Size, nodeDID, say)
	if err != nil {
		return nil, err
	}
	if head.Root != published.Root || head.Epoch != published.Epoch {
		return nil, fmt.Errorf("%w: the scores name head %d with root %s of epoch %d, the signed head has root %s of epoch %d",
			ErrLogMismatch, published.Size, published.Root, published.Epoch, head.Root, head.Epoch)
	}
	rep.Checks = append(rep.Checks, say("verified: %d leaves give root %s, the head of size %d that %s signed", len(raws), head.Root, head.Size, nodeDID))

	tip, err := cfg.Chain.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("auditor: the chain's head: %w", err)
	}
	anchor, err := FirstAnchor(ctx, cfg.Chain, dep, head.Size, head.Root, dep.Block, tip)
	if err != nil {
		return nil, err
	}
	rep.Anchor = anchor
	if anchor.Block != published.Block {
		return nil, fmt.Errorf("%w: the root was first anchored in block %d (transaction %s), the node used the facts of block %d",
			ErrLogMismatch, anchor.Block, anchor.Tx, published.Block)
	}
	rep.Checks = append(rep.Checks, say("verified: root %s of size %d is anchored on chain %d in block %d by %s (transaction %s)",
		head.Root, head.Size, dep.ChainID, anchor.Block, anchor.Node, anchor.Tx))
	if published.At > head.Closed || published.At%(head.Epoch+1) != 0 || published.At/(head.Epoch+1) <= 0 {
		return nil, fmt.Errorf("%w: the scores are computed at %d, not the end of epoch %d before the head closed at %d",
			ErrLogMismatch, published.At, head.Epoch, head.Closed)
	}

	sh, err := ScoreHead(ctx, cfg.Chain, dep, reputation.Head{Size: head.Size, Root: head.Root, Epoch: head.Epoch}, published.At, anchor, cfg.Dir,
		func(context.Context) ([][]byte, error) { return raws, nil })
	if err != nil {
		return nil, err
	}
	rep.Audits = len(sh.Inputs.Audits)
	rep.Checks = append(rep.Checks, say("recomputed: %d agents from %d audits that count, with the stake, bindings and bounties of block %d read from the auditor's chain",
		len(sh.Scores), rep.Audits, anchor.Block))
	if p := wire.ScoreParams(sh.Params); p != published.Params {
		return nil, fmt.Errorf("%w: the node computed with parameters %+v, the chain's deployment gives %+v", ErrLogMismatch, published.Params, p)
	}
	rep.Mismatches, rep.Agents = compare(published.Scores, sh.Scores)
	if cfg.DID != "" {
		for i := range sh.Scores {
			if sh.Scores[i].DID == cfg.DID {
				rep.Subject = &sh.Scores[i]
			}
		}
		if rep.Subject == nil {
			return nil, fmt.Errorf("auditor: the log up to size %d names no audit of %s and gives it no stake: it has no score at this head", head.Size, cfg.DID)
		}
	}
	return rep, nil
}

// deploymentOf is the pinned deployment, or the one the node names on the auditor's chain.
func deploymentOf(ctx context.Context, cfg CheckConfig, info wire.Info) (*contracts.Deployment, error) {
	id, err := chainID(ctx, cfg.Chain)
	if err != nil {
		return nil, err
	}
	dep := cfg.Deployment
	if dep == nil {
		if info.Chain.ID != id {
			return nil, fmt.Errorf("auditor: the node settles on chain %d, the JSON-RPC given is chain %d", info.Chain.ID, id)
		}
		dep = &contracts.Deployment{ChainID: id}
		for name, dst := range map[string]*common.Address{"StakeRegistry": &dep.Contracts.StakeRegistry, "BountyEscrow": &dep.Contracts.BountyEscrow,
			"RootAnchor": &dep.Contracts.RootAnchor} {
			a, ok := info.Contracts[name]
			if !ok || !common.IsHexAddress(a) {
				return nil, fmt.Errorf("auditor: the node names no %s address; pin the deployment", name)
			}
			*dst = common.HexToAddress(a)
		}
	}
	if dep.ChainID != id {
		return nil, fmt.Errorf("auditor: the deployment is on chain %d, the JSON-RPC given is chain %d", dep.ChainID, id)
	}
	return dep, nil
}

func chainID(ctx context.Context, c Chain) (uint64, error) {
	type ider interface {
		ChainID(ctx context.Context) (*big.Int, error)
	}
	i, ok := c.(ider)
	if !ok {
		return 0, errors.New("auditor: the chain connection cannot read its chain id")
	}
	id, err := i.ChainID(ctx)
	if err != nil {
		return 0, fmt.Errorf("auditor: read the chain id: %w", err)
	}
	return id.Uint64(), nil
}

// publishedScores reads every page of the node's scores of a head.
func publishedScores(ctx context.Context, c *client.Client, size uint64) (*wire.ScoredHead, error) {
	first, err := c.LogScores(ctx, size, "", "", 0, false)
	if err != nil {
		return nil, err
	}
	for next := first.Next; next != ""; {
		page, err := c.LogScores(ctx, first.Size, "", next, 0, false)
		if err != nil {
			return nil, err
		}
		first.Scores = append(first.Scores, page.Scores...)
		next = page.Next
	}
	return first, nil
}

// readLeaves reads the log's leaves below size, checks each envelope against its leaf, and
// that they give the root of the head of that size the node signed.
func readLeaves(ctx context.Context, c *client.Client, size uint64, nodeDID string, say func(string, ...any) string) ([][]byte, verify.Head, error) {
	var tree merkle.Tree
	raws := make([][]byte, 0, size)
	var head verify.Head
	found := false
	for from := uint64(0); from < size; {
		page, err := c.LogLeaves(ctx, from, size, "", 0)
		if err != nil {
			return nil, head, err
		}
		if len(page.Leaves) == 0 {
			return nil, head, fmt.Errorf("%w: the node served no leaves from %d below %d", ErrLogMismatch, from, size)
		}
		for _, l := range page.Leaves {
			if l.Index != from {
				return nil, head, fmt.Errorf("%w: leaf %d came where leaf %d was due", ErrLogMismatch, l.Index, from)
			}
			if got := verify.EnvelopeLeaf(l.Envelope); got != l.Leaf {
				return nil, head, fmt.Errorf("%w: the envelope of leaf %d hashes to %s, not %s", ErrLogMismatch, l.Index, got, l.Leaf)
			}
			tree.Append(l.Leaf)
			raws = append(raws, l.Envelope)
			from++
		}
		for _, h := range page.Heads {
			if h.Size != size || found {
				continue
			}
			opened, err := verify.OpenHead(h.Signed, nodeDID)
			if err != nil {
				return nil, head, fmt.Errorf("%w: the head of size %d: %w", ErrLogMismatch, size, err)
			}
			if opened.Size == size {
				head, found = opened, true
			}
		}
		if from%(16*256) == 0 {
			say("read: %d of %d leaves", from, size)
		}
	}
	if !found {
		return nil, head, fmt.Errorf("%w: the node served no signed head of size %d with the leaves", ErrLogMismatch, size)
	}
	root, err := tree.Root(size)
	if err != nil {
		return nil, head, err
	}
	if root != head.Root {
		return nil, head, fmt.Errorf("%w: the leaves give root %s, the signed head of size %d has %s", ErrLogMismatch, root, size, head.Root)
	}
	return raws, head, nil
}

// compare finds every figure that differs, bit for bit, between the published and the
// recomputed scores, and counts the agents compared.
func compare(published []wire.HeadScore, mine []reputation.HeadScore) ([]Mismatch, int) {
	byDID := make(map[string]reputation.HeadScore, len(mine))
	for _, m := range mine {
		byDID[m.DID] = m
	}
	var out []Mismatch
	seen := map[string]bool{}
	for _, p := range published {
		seen[p.DID] = true
		m, ok := byDID[p.DID]
		if !ok {
			out = append(out, Mismatch{DID: p.DID, Field: "agent", Node: p.Score, Recomputed: math.NaN()})
			continue
		}
		for _, f := range []struct {
			name string
			a, b float64
		}{{"score", p.Score, m.Score}, {"confidence", p.Confidence, m.Confidence}, {"weight", p.Weight, m.Weight},
			{"standing", p.Standing, m.Standing}, {"relative", p.Relative, m.Relative}} {
			if math.Float64bits(f.a) != math.Float64bits(f.b) {
				out = append(out, Mismatch{DID: p.DID, Field: f.name, Node: f.a, Recomputed: f.b})
			}
		}
	}
	for _, m := range mine {
		if !seen[m.DID] {
			out = append(out, Mismatch{DID: m.DID, Field: "agent", Node: math.NaN(), Recomputed: m.Score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].DID < out[j].DID })
	return out, len(published)
}
