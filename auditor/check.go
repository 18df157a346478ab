package auditor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
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
	Checks []string
	// Trusted names what the check took on the node's word (the contracts, when not pinned;
	// an anchor by a wallet not bound to the node's DID).
	Trusted    []string
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
//  1. the contracts (pinned, or as the node names them: Report.Trusted says so), the escrow's
//     stake registry the one named;
//  2. the node's published scores of the head (every page, each after the last);
//  3. the first RootAnchor event holding the head's size and root on the auditor's chain, whose
//     block must be the node's stated one;
//  4. every leaf up to the head (GET /v1/log/leaves): each envelope's hash is its leaf, the
//     leaves give the root of the head the node's DID signed, and the node's stated time is
//     the end of that head's epoch (epochEnd);
//  5. the chain's facts at that block, replayed from the auditor's chain (ReadFacts); whether
//     the anchoring wallet is bound to the node's DID (Report.Trusted when not);
//  6. the scores (Facts.Score), every agent's five figures compared with ==.
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
	rep := &Report{}
	source := "as given"
	if cfg.Deployment == nil {
		source = "as the node's /v1/info names them (pin them with a deployment file to not take the node's word)"
		rep.Trusted = append(rep.Trusted, "the contracts are the ones the node names")
	}
	rep.Checks = append(rep.Checks, say("contracts: StakeRegistry %s, BountyEscrow %s, RootAnchor %s on chain %d, %s",
		dep.Contracts.StakeRegistry, dep.Contracts.BountyEscrow, dep.Contracts.RootAnchor, dep.ChainID, source))
	if err := sameRegistry(ctx, cfg.Chain, dep); err != nil {
		return nil, err
	}

	published, err := publishedScores(ctx, cfg.Node, cfg.Size)
	if err != nil {
		return nil, err
	}
	if cfg.Size != 0 && published.Size != cfg.Size {
		return nil, fmt.Errorf("%w: asked for the scores of head %d, the node answered head %d", ErrLogMismatch, cfg.Size, published.Size)
	}
	rep.Size, rep.Epoch, rep.Root, rep.At = published.Size, published.Epoch, published.Root, published.At
	rep.Checks = append(rep.Checks, say("read: the node's scores of %d agents at head %d (epoch %d), computed at %d with the facts of block %d",
		len(published.Scores), published.Size, published.Epoch, published.At, published.Block))

	// The chain first: a head no anchor holds is not read at all (its size is the node's word).
	tip, err := cfg.Chain.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("auditor: the chain's head: %w", err)
	}
	anchor, err := FirstAnchor(ctx, cfg.Chain, dep, published.Size, published.Root, dep.Block, tip)
	if err != nil {
		return nil, err
	}
	rep.Anchor = anchor
	if anchor.Block != published.Block {
		return nil, fmt.Errorf("%w: the root was first anchored in block %d (transaction %s), the node used the facts of block %d",
			ErrLogMismatch, anchor.Block, anchor.Tx, published.Block)
	}
	rep.Checks = append(rep.Checks, say("verified: root %s of size %d is anchored on chain %d in block %d by %s (transaction %s)",
		published.Root, published.Size, dep.ChainID, anchor.Block, anchor.Node, anchor.Tx))

	raws, head, err := readLeaves(ctx, cfg.Node, published.Size, nodeDID, say)
	if err != nil {
		return nil, err
	}
	if head.Root != published.Root || head.Epoch != published.Epoch {
		return nil, fmt.Errorf("%w: the scores name head %d with root %s of epoch %d, the signed head has root %s of epoch %d",
			ErrLogMismatch, published.Size, published.Root, published.Epoch, head.Root, head.Epoch)
	}
	rep.Checks = append(rep.Checks, say("verified: %d leaves give root %s, the head of size %d that %s signed", len(raws), head.Root, head.Size, nodeDID))
	if err := epochEnd(published.At, head, raws[len(raws)-1]); err != nil {
		return nil, err
	}

	facts, err := ReadFacts(ctx, cfg.Chain, dep, anchor.Block, cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer facts.Close()
	wallets, err := facts.Stakes.WalletsOf(ctx, nodeDID)
	if err != nil {
		return nil, err
	}
	if slices.Contains(wallets, anchor.Node) {
		rep.Checks = append(rep.Checks, say("verified: the anchoring wallet %s is bound to the node's DID at block %d", anchor.Node, anchor.Block))
	} else {
		rep.Trusted = append(rep.Trusted, "the anchoring wallet is not bound to the node's DID")
		rep.Checks = append(rep.Checks, say("note: the anchoring wallet %s is not bound to %s at block %d: the root is on chain, but not under the node's name", anchor.Node, nodeDID, anchor.Block))
	}
	ls, err := facts.Score(ctx, dep, raws, published.At)
	if err != nil {
		return nil, err
	}
	sh := reputation.NewScoredHead(reputation.Head{Size: head.Size, Root: head.Root, Epoch: head.Epoch}, published.At, anchor.Block, anchor.Tx.Hex(), ls, facts.Params)
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

// epochEnd checks that at, the time the node computed the scores at, is the end of the head's
// epoch: at = (epoch + 1) × L for an epoch length L under which the log's last leaf (an audit
// of the head's own epoch: epochs close only with audits, and in order) falls in that epoch,
// before the head closed. The head does not sign L; with an epoch number as large as a log's
// (unix time / L) no other L puts that audit in that epoch, so a node cannot pick its time.
func epochEnd(at int64, head verify.Head, last []byte) error {
	v, err := identity.NewVerifier(identity.VerifierConfig{}).CheckArchived(context.Background(), last)
	var ve *identity.VerifyError
	if errors.As(err, &ve) && ve.Authentic != nil {
		v, err = ve.Authentic, nil
	}
	if err != nil {
		return fmt.Errorf("%w: the log's last leaf: %w", ErrLogMismatch, err)
	}
	iat := v.Envelope.IssuedAt
	bad := func(why string) error {
		return fmt.Errorf("%w: the scores are computed at %d, which is not the end of epoch %d (%s)", ErrLogMismatch, at, head.Epoch, why)
	}
	switch {
	case head.Epoch < 0 || at <= 0 || at%(head.Epoch+1) != 0:
		return bad("no whole epoch length gives it")
	case at > head.Closed:
		return bad(fmt.Sprintf("the head closed at %d, before it", head.Closed))
	case iat < 0 || iat >= at || iat/(at/(head.Epoch+1)) != head.Epoch:
		return bad(fmt.Sprintf("the log's last audit, issued at %d, is not of that epoch under that length", iat))
	}
	return nil
}

// sameRegistry checks that the escrow's stake registry is the deployment's: the registry whose
// stakes weigh the escrow's bounties.
func sameRegistry(ctx context.Context, c Chain, dep *contracts.Deployment) error {
	be := contracts.NewBountyEscrow()
	reg, err := bind.Call(be.Instance(c, dep.Contracts.BountyEscrow), &bind.CallOpts{Context: ctx}, be.PackStakeRegistry(), be.UnpackStakeRegistry)
	if err != nil {
		return fmt.Errorf("auditor: read the escrow's stake registry: %w", err)
	}
	if reg != dep.Contracts.StakeRegistry {
		return fmt.Errorf("%w: the escrow %s stakes in %s, not the StakeRegistry %s named", ErrLogMismatch, dep.Contracts.BountyEscrow, reg, dep.Contracts.StakeRegistry)
	}
	return nil
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

// publishedScores reads every page of the node's scores of a head: each page after the one
// before in DID order, at most maxScorePages of them (a node cannot keep the auditor reading).
func publishedScores(ctx context.Context, c *client.Client, size uint64) (*wire.ScoredHead, error) {
	first, err := c.LogScores(ctx, size, "", "", 0, false)
	if err != nil {
		return nil, err
	}
	for next, pages := first.Next, 1; next != ""; pages++ {
		if pages >= maxScorePages {
			return nil, fmt.Errorf("%w: more than %d pages of scores", ErrLogMismatch, maxScorePages)
		}
		page, err := c.LogScores(ctx, first.Size, "", next, 0, false)
		if err != nil {
			return nil, err
		}
		if page.Size != first.Size || len(page.Scores) == 0 || page.Scores[0].DID <= next || (page.Next != "" && page.Next <= next) {
			return nil, fmt.Errorf("%w: the page of scores after %s does not follow it", ErrLogMismatch, next)
		}
		first.Scores = append(first.Scores, page.Scores...)
		next = page.Next
	}
	return first, nil
}

// maxScorePages bounds the pages of scores an auditor reads: 2,000 of 1,000 agents.
const maxScorePages = 2000

// readLeaves reads the log's leaves below size, checks each envelope against its leaf, and
// that they give the root of the head of that size the node signed.
func readLeaves(ctx context.Context, c *client.Client, size uint64, nodeDID string, say func(string, ...any) string) ([][]byte, verify.Head, error) {
	var tree merkle.Tree
	var raws [][]byte // not sized by the node's word
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
