package reputation_test

import (
	"context"
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/reputation"
)

// Paid lists f's finished bounties between a and bs that paid a worker (reputation.Settlements).
func (f *fakeChain) Paid(_ context.Context, a common.Address, bs []common.Address) ([]reputation.BountyFacts, error) {
	var out []reputation.BountyFacts
	for _, id := range slices.Sorted(func(yield func(uint64) bool) {
		for id := range f.bounties {
			if !yield(id) {
				return
			}
		}
	}) {
		b := f.bounties[id]
		if !b.Finished || b.Amount == nil || b.Amount.Sign() == 0 {
			continue
		}
		if b.Poster == a && slices.Contains(bs, b.Worker) || b.Worker == a && slices.Contains(bs, b.Poster) {
			out = append(out, b)
		}
	}
	return out, nil
}

// PaidWallets lists the wallets of f's finished bounties in tokens that paid a worker and a fee.
func (f *fakeChain) PaidWallets(_ context.Context, tokens []common.Address) ([]common.Address, error) {
	var out []common.Address
	for _, b := range f.bounties {
		if b.Finished && b.Amount != nil && b.Amount.Sign() > 0 && b.Fee != nil && b.Fee.Sign() > 0 && slices.Contains(tokens, b.Token) {
			for _, w := range []common.Address{b.Poster, b.Worker} {
				if !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
		}
	}
	return out, nil
}

// feedbackList is a FeedbackSource over a list: the clients' feedback, in its order.
type feedbackList []reputation.Feedback

func (l feedbackList) Feedback(_ context.Context, clients []common.Address) ([]reputation.Feedback, error) {
	var out []reputation.Feedback
	for _, f := range l {
		if slices.Contains(clients, f.Client) {
			out = append(out, f)
		}
	}
	return out, nil
}

// freshWallet is a wallet nobody has seen: a new key's address.
func freshWallet(t *testing.T) common.Address {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return crypto.PubkeyToAddress(k.PublicKey)
}

// starred is a 0-100 rating from client of the agent id subject's wallet owns, naming subject.
func starred(subject string, owner, client common.Address, value int64, block uint64) reputation.Feedback {
	return reputation.Feedback{DID: subject, Owner: owner, Client: client, Value: big.NewInt(value), Tag1: "starred",
		Time: 1_700_000_000 + int64(block), Block: block}
}

func TestExternalFeedbackRules(t *testing.T) {
	ctx := context.Background()
	subjectWallet, client, otherWallet := common.HexToAddress("0xb1"), common.HexToAddress("0xb2"), common.HexToAddress("0xb3")
	junkToken, stakeToken := common.HexToAddress("0xee"), common.HexToAddress("0x57")
	f := &fakeChain{
		bounties: map[uint64]reputation.BountyFacts{
			// client posted, the subject's wallet worked and was paid 1 ETH, with 0.005 ETH of fee:
			// backing 200 × 0.005 = 1.
			1: {Finished: true, Poster: client, Worker: subjectWallet, Amount: big.NewInt(1e18), Fee: big.NewInt(5e15)},
			// otherWallet paid the subject in a token anyone can mint: no value.
			2: {Finished: true, Poster: otherWallet, Worker: subjectWallet, Token: junkToken, Amount: big.NewInt(1e18), Fee: big.NewInt(1e18)},
		},
		wallets: map[string]common.Address{subject: subjectWallet, auditor: otherWallet},
	}
	rules := &reputation.Rules{Wallets: f, Bounties: f, Settlements: f}
	ok := starred(subject, subjectWallet, client, 87, 10)
	tests := []struct {
		name  string
		fb    []reputation.Feedback
		score float64 // -1: nothing counts
	}{
		{"a rating from a wallet that paid the subject counts", []reputation.Feedback{ok}, 0.87},
		{"a fresh wallet's rating counts for nothing", []reputation.Feedback{starred(subject, subjectWallet, freshWallet(t), 100, 10)}, -1},
		{"an agent id another wallet owns names nobody", []reputation.Feedback{starred(subject, otherWallet, client, 0, 10)}, -1},
		{"the agent wallet may be the subject's instead of the owner", func() []reputation.Feedback {
			fb := ok
			fb.Owner, fb.Wallet = otherWallet, subjectWallet
			return []reputation.Feedback{fb}
		}(), 0.87},
		{"the subject's own wallet rates itself: nothing", []reputation.Feedback{starred(subject, subjectWallet, subjectWallet, 100, 10)}, -1},
		{"no DID on chain: nothing", []reputation.Feedback{starred("", subjectWallet, client, 100, 10)}, -1},
		{"a DID that does not parse: nothing", []reputation.Feedback{starred("did:key:nope", subjectWallet, client, 100, 10)}, -1},
		{"uptime is no quality rating: nothing", func() []reputation.Feedback {
			fb := ok
			fb.Tag1 = "uptime"
			return []reputation.Feedback{fb}
		}(), -1},
		{"Surety's own mirror of an audit is skipped", func() []reputation.Feedback {
			fb := ok
			fb.Tag1 = reputation.ExternalTag
			return []reputation.Feedback{fb}
		}(), -1},
		{"no tag reads on the 0-100 scale", func() []reputation.Feedback {
			fb := ok
			fb.Tag1 = ""
			return []reputation.Feedback{fb}
		}(), 0.87},
		{"decimals: 87.25 with two decimals", func() []reputation.Feedback {
			fb := ok
			fb.Value, fb.Decimals = big.NewInt(8725), 2
			return []reputation.Feedback{fb}
		}(), 0.8725},
		{"above the scale clamps to 1", []reputation.Feedback{starred(subject, subjectWallet, client, 250, 10)}, 1},
		{"below zero clamps to 0", []reputation.Feedback{starred(subject, subjectWallet, client, -40, 10)}, 0},
		{"decimals above 18 are no value", func() []reputation.Feedback {
			fb := ok
			fb.Decimals = 19
			return []reputation.Feedback{fb}
		}(), -1},
		{"a bounty in a token the deployment does not price backs nothing", []reputation.Feedback{starred(subject, subjectWallet, otherWallet, 100, 10)}, -1},
		{"a client's latest feedback counts, not its first", []reputation.Feedback{starred(subject, subjectWallet, client, 10, 10), starred(subject, subjectWallet, client, 60, 11)}, 0.6},
		{"a later rating of an agent id falsely claiming the DID hides nothing", []reputation.Feedback{ok, starred(subject, otherWallet, client, 0, 11)}, 0.87},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rules.External(ctx, tt.fb, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.score < 0 {
				if len(got) != 0 {
					t.Fatalf("counted %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 || got[0].Subject != subject || got[0].Client != client && got[0].Client != tt.fb[0].Client {
				t.Fatalf("got %+v, want one signal on %s", got, subject)
			}
			if got[0].Score != tt.score || got[0].Settled != 1 {
				t.Errorf("score %v settled %v, want %v and 1", got[0].Score, got[0].Settled, tt.score)
			}
		})
	}

	// The stake token is priced: its fees back a rating.
	f.bounties[2] = reputation.BountyFacts{Finished: true, Poster: otherWallet, Worker: subjectWallet, Token: stakeToken, Amount: big.NewInt(1e18), Fee: big.NewInt(5e15)}
	rules.PricedTokens = []common.Address{stakeToken}
	if got, err := rules.External(ctx, []reputation.Feedback{starred(subject, subjectWallet, otherWallet, 100, 10)}, nil); err != nil || len(got) != 1 || got[0].Settled != 1 {
		t.Errorf("a bounty in the stake token: %+v, %v; want it to back the rating in full", got, err)
	}
	// A subject without stake that counts gets nothing from ratings.
	if got, _ := rules.External(ctx, []reputation.Feedback{ok}, func(string) bool { return false }); len(got) != 0 {
		t.Errorf("an unstaked subject: %+v, want nothing", got)
	}
	// A refunded or unfinished bounty is no settled value: the fake's Paid skips it, as the
	// escrow index's does (TestPaidBetween in package escrow).
	rules.Settlements = nil
	if got, _ := rules.External(ctx, []reputation.Feedback{ok}, nil); len(got) != 0 {
		t.Errorf("without Settlements nothing counts, got %+v", got)
	}
}

// TestSybilFeedbackMovesNothing is the acceptance on the engine: a hundred ERC-8004
// ratings from fresh wallets leave every score bit for bit as it was, and one from a wallet
// that settled with the subject moves it, by what the rule says.
func TestSybilFeedbackMovesNothing(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	subjectDID := worker.DID.String()
	workerWallet, posterWallet := f.wallets[subjectDID], f.wallets[poster.DID.String()]
	// Bounty 8: the poster's wallet paid the worker's 1 ETH with 0.005 ETH of fee.
	f.bounties[8] = reputation.BountyFacts{Finished: true, Poster: posterWallet, Worker: workerWallet, Amount: big.NewInt(1e18), Fee: big.NewInt(5e15)}
	rules := &reputation.Rules{ChainID: 1337, Escrow: common.HexToAddress(escrow), Bounties: f, Wallets: f, Agents: f, Settlements: f}

	const at = 1_700_100_000
	scores := func(fb []reputation.Feedback) *reputation.Scores {
		t.Helper()
		ext, err := rules.External(ctx, fb, nil)
		if err != nil {
			t.Fatal(err)
		}
		dids := []string{poster.DID.String(), subjectDID}
		slices.Sort(dids)
		idx := slices.Index(dids, subjectDID)
		g := &reputation.Graph{Stake: make([]float64, 2)}
		g.Stake[1-idx] = 1 // the poster's DID is staked
		g.Audits = []reputation.Edge{{Auditor: int32(1 - idx), Subject: int32(idx), Score: 0.9, Age: 3600, Backed: true, Settled: 1}}
		for _, s := range ext {
			g.External = append(g.External, reputation.ExternalEdge{Subject: int32(idx), Score: s.Score, Age: float64(at - s.Time), Settled: s.Settled})
		}
		return reputation.Compute(g, reputation.Params{})
	}
	before := scores(nil)

	var sybils []reputation.Feedback
	for i := range 100 {
		sybils = append(sybils, starred(subjectDID, workerWallet, freshWallet(t), 0, uint64(i+1)))
	}
	after := scores(sybils)
	for i := range before.Score {
		if math.Float64bits(before.Score[i]) != math.Float64bits(after.Score[i]) || math.Float64bits(before.Weight[i]) != math.Float64bits(after.Weight[i]) {
			t.Fatalf("agent %d: 100 fresh wallets moved score %v → %v, weight %v → %v", i, before.Score[i], after.Score[i], before.Weight[i], after.Weight[i])
		}
	}

	// The poster's wallet settled 1 ETH with the worker: its 0 moves the worker's score down.
	settled := scores(append(sybils, starred(subjectDID, workerWallet, posterWallet, 0, 200)))
	idx := 1
	if subjectDID < poster.DID.String() {
		idx = 0
	}
	if !(settled.Score[idx] < before.Score[idx]) {
		t.Fatalf("a settled wallet's 0 left the score at %v (was %v)", settled.Score[idx], before.Score[idx])
	}
	// Full backing (1 ETH settled) at ExternalWeight, decayed over its age.
	age := float64(at - (1_700_000_000 + 200))
	want := reputation.ExternalWeight * math.Exp2(-age/reputation.DefaultParams.HalfLife)
	if got := settled.External[idx]; math.Abs(got-want) > 1e-9 {
		t.Errorf("imported weight %v, want %v", got, want)
	}
	if d := settled.Weight[idx] - before.Weight[idx]; math.Abs(d-settled.External[idx]) > 1e-9 {
		t.Errorf("weight grew by %v, the imported part is %v", d, settled.External[idx])
	}
	// Standing is untouched: a wallet is no agent of the trust graph.
	for i := range before.Standing {
		if before.Standing[i] != settled.Standing[i] {
			t.Errorf("standing of %d moved: %v → %v", i, before.Standing[i], settled.Standing[i])
		}
	}
}

// TestServiceImportsFeedback: the service's recomputation reads the feedback source and
// counts what the rule keeps, and the scores stay as they were without it.
func TestServiceImportsFeedback(t *testing.T) {
	ctx := context.Background()
	poster, worker, f := settledBounty()
	subjectDID := worker.DID.String()
	f.bounties[8] = reputation.BountyFacts{Finished: true, Poster: f.wallets[poster.DID.String()], Worker: f.wallets[subjectDID],
		Amount: big.NewInt(1e18), Fee: big.NewInt(5e15)}
	fb := feedbackList{}
	for i := range 100 {
		fb = append(fb, starred(subjectDID, f.wallets[subjectDID], freshWallet(t), 100, uint64(i+1)))
	}
	now := time.Now().Unix()
	for i := range fb {
		fb[i].Time = now - 60
	}
	run := func(fb feedbackList) *reputation.Reputation {
		t.Helper()
		svc := reputation.NewService(reputation.ServiceConfig{
			Store:    openStore(t),
			Rules:    &reputation.Rules{ChainID: 1337, Escrow: common.HexToAddress(escrow), Bounties: f, Wallets: f, Agents: f, Settlements: f},
			Stakes:   stakeMap{poster.DID.String(): 1, subjectDID: 1},
			Feedback: fb,
		})
		if err := svc.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := svc.Reputation(ctx, subjectDID)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Given after the scores' clock step began (Time in the future of it): it counts at once.
	settledFuture := append(slices.Clone(fb), reputation.Feedback{DID: subjectDID, Owner: f.wallets[subjectDID], Client: f.wallets[poster.DID.String()],
		Value: big.NewInt(100), Tag1: "starred", Time: now + 3600, Block: 501})
	if r := run(settledFuture); math.Abs(r.External-reputation.ExternalWeight) > 1e-9 { // fixed point: 2^-32 steps
		t.Errorf("a rating given after the clock step began: external %v, want %v at age 0", r.External, reputation.ExternalWeight)
	}
	if r := run(fb); r.Score != 0.5 || r.Weight != 0 || r.External != 0 || len(r.Imported) != 0 {
		t.Fatalf("100 fresh wallets' ratings: score %v weight %v external %v, want the prior and no weight", r.Score, r.Weight, r.External)
	}
	settledFb := append(slices.Clone(fb), reputation.Feedback{DID: subjectDID, Owner: f.wallets[subjectDID], Client: f.wallets[poster.DID.String()],
		Value: big.NewInt(100), Tag1: "starred", Time: now - 60, Block: 500})
	r := run(settledFb)
	if len(r.Imported) != 1 || r.Imported[0].Client != f.wallets[poster.DID.String()] || r.Imported[0].Score != 1 {
		t.Errorf("imported %+v, want the poster wallet's rating alone", r.Imported)
	}
	if !(r.Score > 0.5) || r.Weight <= 0 || r.External != r.Weight {
		t.Fatalf("a settled wallet's 100: score %v weight %v external %v, want above the prior, all of the weight imported", r.Score, r.Weight, r.External)
	}
	t.Logf("one settled rating of 100: score %.4f, weight %.4f", r.Score, r.Weight)
}

// TestImportedWeightIsCapped: however many paying wallets rate one subject, their ratings
// weigh ExternalCap together, each scaled down alike, so the mean they carry stays theirs.
func TestImportedWeightIsCapped(t *testing.T) {
	g := &reputation.Graph{Stake: []float64{1, 1}}
	for i := range 10 {
		score := 1.0
		if i%2 == 1 {
			score = 0.5
		}
		g.External = append(g.External, reputation.ExternalEdge{Subject: 1, Score: score, Settled: 1})
	}
	s := reputation.Compute(g, reputation.Params{})
	if math.Abs(s.External[1]-reputation.ExternalCap) > 1e-9 || math.Abs(s.Weight[1]-reputation.ExternalCap) > 1e-9 {
		t.Fatalf("ten full ratings weigh %v (weight %v), want the cap %v", s.External[1], s.Weight[1], reputation.ExternalCap)
	}
	// Their mean, 0.75, at the cap's weight: (1 + 0.3 × 0.75) / (2 + 0.3).
	if want := (1 + reputation.ExternalCap*0.75) / (2 + reputation.ExternalCap); math.Abs(s.Score[1]-want) > 1e-9 {
		t.Errorf("score %v, want %v", s.Score[1], want)
	}
	// Two ratings are below the cap: they weigh in full.
	g.External = g.External[:2]
	if s := reputation.Compute(g, reputation.Params{}); math.Abs(s.External[1]-2*reputation.ExternalWeight) > 1e-9 {
		t.Errorf("two full ratings weigh %v, want %v", s.External[1], 2*reputation.ExternalWeight)
	}
}
