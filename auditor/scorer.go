package auditor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/reputation"
)

// ScorerConfig wires a Scorer.
type ScorerConfig struct {
	Chain      Chain
	Deployment *contracts.Deployment
	Log        *reputation.Log
	Store      *reputation.Store
	// Confirmations: an anchor is scored once its block is this deep (the chain's facts at it
	// must not change under a reorganization).
	Confirmations uint64
	// Every is how often the latest head is looked at (0: DefaultScoreEvery).
	Every time.Duration
	// Dir holds the scratch databases ("" for the system's temporary directory).
	Dir string
	// OnScored, when set, is called with each head scored (tests wait on it).
	OnScored func(*reputation.ScoredHead)
	Logger   *slog.Logger
}

// DefaultScoreEvery is how often a Scorer looks for a newly anchored head.
const DefaultScoreEvery = 2 * time.Second

// Scorer computes the scores of each of the node's heads once it is anchored on chain, the
// way an auditor recomputes them (ReadFacts, Facts.Score), and records them
// (reputation.Store.SaveScoredHead): the scores the node publishes for auditors to check.
type Scorer struct {
	cfg ScorerConfig
	// What the chain was searched for the latest head's anchor: blocks below next hold none
	// for the head of size size (one goroutine, Run's, uses it).
	scan struct{ size, next uint64 }
}

// NewScorer builds a Scorer.
func NewScorer(cfg ScorerConfig) *Scorer {
	if cfg.Every == 0 {
		cfg.Every = DefaultScoreEvery
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Scorer{cfg: cfg}
}

// Run scores anchored heads until ctx ends. It first removes the scratch databases a crash
// left in Dir.
func (s *Scorer) Run(ctx context.Context) error {
	if s.cfg.Dir != "" {
		stale, _ := filepath.Glob(filepath.Join(s.cfg.Dir, scratchPrefix+"*"))
		for _, d := range stale {
			if err := os.RemoveAll(d); err != nil {
				s.cfg.Logger.Warn("auditor: remove a scratch database left behind", "dir", d, "err", err)
			}
		}
	}
	wait := s.cfg.Every
	for {
		_, err := s.Pass(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			// A replay that failed is not retried at once: each try reads the chain again.
			wait = min(2*wait, maxScoreBackoff)
			s.cfg.Logger.Warn("auditor: scoring the anchored head failed; trying again", "in", wait, "err", err)
		default:
			wait = s.cfg.Every
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// maxScoreBackoff bounds the wait after failed tries to score a head.
const maxScoreBackoff = 5 * time.Minute

// Pass (one at a time: Run calls it) scores the log's latest head if it is anchored (with enough confirmations) and not
// scored yet, and returns it (nil when there was nothing to do). A head a later one replaced
// before its anchor was confirmed is never scored: the anchors cover the latest head.
func (s *Scorer) Pass(ctx context.Context) (*reputation.ScoredHead, error) {
	head := s.cfg.Log.Head()
	if head.Size == 0 {
		return nil, nil
	}
	if done, err := s.cfg.Store.Scored(ctx, head.Size); err != nil || done {
		return nil, err
	}
	tip, err := s.cfg.Chain.BlockNumber(ctx)
	if err != nil {
		return nil, err
	}
	if tip < s.cfg.Confirmations {
		return nil, nil
	}
	if s.scan.size != head.Size {
		s.scan.size, s.scan.next = head.Size, 0
	}
	to := tip - s.cfg.Confirmations
	anchor, err := FirstAnchor(ctx, s.cfg.Chain, s.cfg.Deployment, head.Size, head.Root, s.scan.next, to)
	if errors.Is(err, ErrNotAnchored) {
		s.scan.next = to + 1
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sh, err := ScoreHead(ctx, s.cfg.Chain, s.cfg.Deployment, head, s.cfg.Log.EpochEnd(head.Epoch), anchor, s.cfg.Dir, func(ctx context.Context) ([][]byte, error) {
		return s.cfg.Log.Envelopes(ctx, 0, head.Size)
	})
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Store.SaveScoredHead(ctx, sh); err != nil {
		return nil, err
	}
	s.cfg.Logger.Info("auditor: scored the anchored head", "size", head.Size, "epoch", head.Epoch, "block", anchor.Block, "agents", len(sh.Scores))
	if s.cfg.OnScored != nil {
		s.cfg.OnScored(sh)
	}
	return sh, nil
}

// ScoreHead computes the scores of head (its leaves read by leaves) at at, with the chain's
// facts at the block of its first anchor.
func ScoreHead(ctx context.Context, c Chain, dep *contracts.Deployment, head reputation.Head, at int64, anchor Anchor, dir string,
	leaves func(context.Context) ([][]byte, error)) (*reputation.ScoredHead, error) {
	raws, err := leaves(ctx)
	if err != nil {
		return nil, err
	}
	if uint64(len(raws)) != head.Size {
		return nil, fmt.Errorf("auditor: %d leaves for a head of size %d", len(raws), head.Size)
	}
	facts, err := ReadFacts(ctx, c, dep, anchor.Block, dir)
	if err != nil {
		return nil, err
	}
	defer facts.Close()
	ls, err := facts.Score(ctx, dep, raws, at)
	if err != nil {
		return nil, err
	}
	return reputation.NewScoredHead(head, at, anchor.Block, anchor.Tx.Hex(), ls, facts.Params), nil
}
