package reputation

import (
	"context"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
)

// External feedback (issue 29): ERC-8004 Reputation Registry feedback, imported as a signal
// of its own beside the audits. Anyone may give ERC-8004 feedback from a fresh wallet, and
// anyone may settle a bounty with themselves, so it counts only where money was burned with the
// subject, and then little, and never above a cap:
//
//   - The subject holds stake that counts (Params.MinStake): a free DID gets nothing from it.
//   - The agent id must name a DID on chain (the Identity Registry's metadata key "did"), and
//     the id's owner or its agent wallet must be a wallet bound to that DID in the
//     StakeRegistry: an agent id claiming someone else's DID names nobody.
//   - The client wallet must have paid fees with the subject: a bounty between it and a wallet
//     of the subject's that paid the worker (accepted, released, or resolved with a worker
//     share), either way round, in a token the deployment prices (Rules.PricedTokens: ETH and
//     the stake token), with a fee. A wallet bound to the subject does not count. Its backing
//     is FeeWeight times the fees those bounties paid, in ETH: the part a wash trade cannot
//     take back (the amount returns to a poster that is its own worker).
//   - Only quality ratings on a known scale count: tag1 "starred" or no tag1, a value from 0
//     to 100 (after valueDecimals), read as a score value/100, clamped to [0, 1]. Tag
//     "surety/audit" is Surety's own mirror of an audit that already counts (surety erc8004
//     publish): it is skipped.
//   - Of one client's feedback on one subject the latest not revoked counts (block, then log
//     index), with weight ExternalWeight × decay(age) × min(1, backing / FullBacking).
//   - A subject's imported weight is capped at ExternalCap; above it every imported weight
//     scales down alike.
//
// Its weight adds to the subject's Σ w and its weight times score to Σ w·score, in fixed
// point like the audits', so every node that reads the same blocks gives the same scores. It
// does not touch standing: a wallet is not an agent in the trust graph.

// ExternalWeight is what one imported feedback weighs at full backing, in the units of an
// auditor's word (ETH of standing): a hundredth of what the most trusted auditor's word weighs
// (maxStanding), a tenth of a 1 ETH auditor's.
const ExternalWeight = 0.1

// ExternalCap is the most imported feedback weighs for one subject, however many wallets
// rate it: three full ratings. It moves an agent with no audits from the prior's 0.5 to at
// most 0.6 (a + b = 2).
const ExternalCap = 0.3

// ExternalTag is the tag1 Surety's own published audits carry: they are skipped on import.
const ExternalTag = "surety/audit"

// externalMax is the top of the rating scale imported feedback is read on (starred: 0-100).
const externalMax = 100

// Feedback is one ERC-8004 feedback as the chain holds it, with what the Identity Registry
// said of its agent id.
type Feedback struct {
	// DID is the agent id's on-chain metadata "did"; Owner its ERC-721 owner and Wallet its
	// agent wallet (zero when unset).
	DID           string
	Owner, Wallet common.Address
	Client        common.Address
	Value         *big.Int // int128
	Decimals      uint8
	Tag1, Tag2    string
	Time          int64 // the block's time, unix seconds
	Block         uint64
	LogIndex      uint
}

// FeedbackSource lists the ERC-8004 feedback an index holds that is not revoked, given by
// one of clients to an agent id claiming a DID, in chain order (block, then log index). An
// error is an index that could not be read.
type FeedbackSource interface {
	Feedback(ctx context.Context, clients []common.Address) ([]Feedback, error)
}

// Settlements finds bounties that paid value between wallets.
type Settlements interface {
	// Paid lists the bounties between a and any of bs (a the poster and one of bs the worker,
	// or the other way round) that paid their worker something; each one's Amount is what
	// its worker was paid, its Fee what its settlement paid the treasury, Token its token.
	Paid(ctx context.Context, a common.Address, bs []common.Address) ([]BountyFacts, error)
	// PaidWallets lists the wallets on either side of a bounty in one of tokens that paid its
	// worker and a fee: the only clients whose feedback can count.
	PaidWallets(ctx context.Context, tokens []common.Address) ([]common.Address, error)
}

// ExternalSignal is one imported feedback that counts: its subject, score, time and the fees
// paid behind it.
type ExternalSignal struct {
	Subject string         `json:"subject"`
	Client  common.Address `json:"client"`
	Score   float64        `json:"score"`
	Time    int64          `json:"time"`
	Settled float64        `json:"settled"` // FeeWeight × the fees the client's bounties with the subject paid, in ETH
	Block   uint64         `json:"block"`
}

// priced says whether token's units count as value: ETH, and PricedTokens.
func (r *Rules) priced(token common.Address) bool {
	return token == (common.Address{}) || slices.Contains(r.PricedTokens, token)
}

// ImportFeedback reads from src the feedback of the wallets that paid fees in a priced token
// and returns what counts by the rules (External) for subjects staked says hold stake that
// counts. Without Settlements or src nothing counts.
func (r *Rules) ImportFeedback(ctx context.Context, src FeedbackSource, staked func(did string) bool) ([]ExternalSignal, error) {
	if r.Settlements == nil || src == nil {
		return nil, nil
	}
	tokens := append([]common.Address{{}}, r.PricedTokens...)
	clients, err := r.Settlements.PaidWallets(ctx, tokens)
	if err != nil || len(clients) == 0 {
		return nil, err
	}
	fb, err := src.Feedback(ctx, clients)
	if err != nil {
		return nil, err
	}
	return r.External(ctx, fb, staked)
}

// External applies the import rules to fb (in chain order) and returns the signals that
// count, sorted by subject then client. Without Settlements nothing counts; staked, when not
// nil, says which subjects hold stake that counts.
func (r *Rules) External(ctx context.Context, fb []Feedback, staked func(did string) bool) ([]ExternalSignal, error) {
	if r.Settlements == nil || len(fb) == 0 {
		return nil, nil
	}
	type key struct {
		subject string
		client  common.Address
	}
	wallets := map[string][]common.Address{}
	walletsOf := func(did string) ([]common.Address, error) {
		if ws, ok := wallets[did]; ok {
			return ws, nil
		}
		if _, err := identity.ParseDID(did); err != nil || staked != nil && !staked(did) {
			wallets[did] = nil
			return nil, nil
		}
		ws, err := r.Wallets.WalletsOf(ctx, did)
		wallets[did] = ws
		return ws, err
	}
	// Of each client and subject the latest that counts: an agent id falsely claiming the
	// subject's DID names nobody, and does not hide what the client said of the real one.
	latest := map[key]int{}
	for i := range fb {
		f := &fb[i]
		if _, ok := externalScore(f); !ok || f.DID == "" {
			continue
		}
		ws, err := walletsOf(f.DID)
		if err != nil {
			return nil, err
		}
		owned := slices.Contains(ws, f.Owner) || f.Wallet != (common.Address{}) && slices.Contains(ws, f.Wallet)
		if !owned || slices.Contains(ws, f.Client) {
			continue
		}
		latest[key{f.DID, f.Client}] = i // chain order: the last one wins
	}
	var out []ExternalSignal
	for k, i := range latest {
		f := &fb[i]
		ws := wallets[f.DID]
		paid, err := r.Settlements.Paid(ctx, k.client, ws)
		if err != nil {
			return nil, err
		}
		var backing float64
		for j := range paid {
			if b := &paid[j]; r.priced(b.Token) {
				backing += float64(FeeWeight * ether(b.Fee))
			}
		}
		if backing <= 0 {
			continue
		}
		score, _ := externalScore(f)
		out = append(out, ExternalSignal{Subject: k.subject, Client: k.client, Score: score, Time: f.Time, Settled: backing, Block: f.Block})
	}
	slices.SortFunc(out, func(a, b ExternalSignal) int {
		if a.Subject != b.Subject {
			if a.Subject < b.Subject {
				return -1
			}
			return 1
		}
		return a.Client.Cmp(b.Client)
	})
	return out, nil
}

// externalScore reads a feedback's value as a score in [0, 1]: ok is false for a tag whose
// scale is not a quality rating, or Surety's own mirror of an audit.
func externalScore(f *Feedback) (float64, bool) {
	if f.Tag1 != "" && f.Tag1 != "starred" || f.Value == nil || f.Decimals > 18 {
		return 0, false
	}
	// value / 10^decimals / 100, exactly, then rounded once: every node reads the same bits.
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(f.Decimals)), nil)
	den.Mul(den, big.NewInt(externalMax))
	v, _ := new(big.Rat).SetFrac(f.Value, den).Float64()
	return min(max(v, 0), 1), true
}

// ExternalEdge is one imported feedback as scoring reads it: an index into Graph.Stake.
type ExternalEdge struct {
	Subject int32
	Score   float64 // in [0, 1]
	Age     float64 // seconds since the feedback, at scoring time
	Settled float64 // ETH paid between its client and the subject
}

// external is what feedback e adds to its subject's Σ w and Σ w·score, in fixed point.
func (p Params) external(e *ExternalEdge) (w, ws fixed) {
	back := 1.0
	if p.FullBacking > 0 {
		back = min(1, max(e.Settled, 0)/p.FullBacking)
	}
	x := float64(float64(ExternalWeight*halving(max(e.Age, 0)/p.HalfLife)) * back)
	return toFixed(x), toFixed(x * e.Score)
}

// externalEdges places signals on the agents of a graph (index: DID → engine index), aged at
// at: one given after at (scores are computed at the start of a clock step, or at a head's
// epoch end while the facts are the anchor's block) counts at age 0, as an audit does.
func externalEdges(sigs []ExternalSignal, index func(string) (int32, bool), at int64) []ExternalEdge {
	out := make([]ExternalEdge, 0, len(sigs))
	for _, s := range sigs {
		if j, ok := index(s.Subject); ok {
			out = append(out, ExternalEdge{Subject: j, Score: s.Score, Age: float64(at - s.Time), Settled: s.Settled})
		}
	}
	return out
}

// subjects lists the signals' subjects, for the graph to index.
func subjects(sigs []ExternalSignal) []string {
	out := make([]string, 0, len(sigs))
	for _, s := range sigs {
		out = append(out, s.Subject)
	}
	return out
}
