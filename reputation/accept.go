package reputation

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/units"
)

// Refusals of the acceptance rules (beyond ErrBadAudit, which ParseAudit gives).
var (
	// ErrUnknownSubject: the node knows no agent with the subject's DID.
	ErrUnknownSubject = errors.New("reputation: the subject is not a known agent")
	// ErrSameWallet: auditor and subject are bound to the same wallet (one party auditing itself).
	ErrSameWallet = errors.New("reputation: auditor and subject are bound to the same wallet")
	// ErrUnknownBounty: the audit names a bounty the escrow index does not have.
	ErrUnknownBounty = errors.New("reputation: the audited bounty is not in the escrow index")
	// ErrForeignBounty: the audit names a bounty on another chain or escrow than this node's.
	ErrForeignBounty = errors.New("reputation: the audited bounty is on another chain or escrow")
	// ErrNoStanding: the auditor has no stake that counts, where agents are staked: its word
	// weighs nothing (docs/REPUTATION.md), backed or not, so the audit is not stored. A free
	// identity holds no share of any node's disk.
	ErrNoStanding = errors.New("reputation: the auditor's word weighs nothing: no stake that counts")
)

// BountyFacts is what the rules need to know of a bounty, from the escrow index.
type BountyFacts struct {
	// Finished: the bounty reached an end in which the work was judged (accepted, released,
	// resolved or refunded).
	Finished                bool
	Poster, Arbiter, Worker common.Address
	// Token is the bounty's token (zero: ETH).
	Token common.Address
	// Amount is what the bounty held, Fee what its settlement paid the treasury, in base units
	// of its token (counted as 18 decimals, like ETH).
	Amount, Fee *big.Int
}

// Verdict is what the rules say of an audit: the side of a settlement it speaks for, and
// the value that settlement puts behind it.
type Verdict struct {
	Side Side
	// AuditorBound says a wallet binds the auditor on chain: the anti-entropy window lists
	// bound auditors' audits first.
	AuditorBound bool
	// Settled is the bounty's amount plus FeeWeight times the fee it paid, in ETH; 0 for
	// SideNone. Backing scales with it (Params.FullBacking).
	Settled float64
	// Refused, set only for an audit kept although the rules refuse it (an adopted epoch's
	// leaf, or an audit whose facts changed since it was taken: Service.recordLogged,
	// Service.Recheck), is why: the audit stays in the store for the log's sake and counts 0.
	Refused string
}

// settled is the value a finished bounty puts behind the audits of its sides.
func (f *BountyFacts) settled() float64 {
	return ether(f.Amount) + float64(FeeWeight*ether(f.Fee))
}

// ether is a base-unit amount in units of 10^18 (bounties may pay in any token; settlement
// counts them all as ETH-like); nil is 0.
func ether(x *big.Int) float64 { return units.Ether.Whole(x) }

// Bounties reads bounties from the escrow index; it returns ok=false for an unknown one.
type Bounties interface {
	Bounty(ctx context.Context, id uint64) (facts BountyFacts, ok bool, err error)
}

// Wallets says which wallets a DID is bound to (on this node's chain and stake registry).
type Wallets interface {
	WalletsOf(ctx context.Context, did string) ([]common.Address, error)
}

// Agents says whether the node knows an agent (a registered card, a binding, a DID it issued).
type Agents interface {
	Known(ctx context.Context, did string) (bool, error)
}

// Side is the side of a settled bounty an audit speaks for.
type Side string

// Sides.
const (
	SideNone   Side = ""       // no settlement backs the audit
	SidePoster Side = "poster" // the poster's wallet audits the worker
	SideWorker Side = "worker" // the worker's wallet audits the poster
)

// Rules are the acceptance rules for audits on one chain and escrow.
type Rules struct {
	ChainID  uint64
	Escrow   common.Address
	Bounties Bounties
	Wallets  Wallets
	Agents   Agents // nil: every subject is known
	// Settlements, when set, lets imported ERC-8004 feedback count (External); nil: none does.
	Settlements Settlements
	// PricedTokens are the tokens besides ETH whose fees back imported feedback (the
	// deployment's stake token): a bounty in a token anyone can mint backs nothing.
	PricedTokens []common.Address
}

// Check applies the rules to a parsed audit whose envelope verified (signature, times,
// replay, revocation). It refuses an audit of an unknown subject, one by a DID bound to the
// subject's wallet, and one naming a bounty that is not in this node's escrow index. It
// reports the side of a settlement the audit speaks for: SidePoster when it names a finished
// bounty, the auditor is bound to its poster's wallet and the subject to its worker's;
// SideWorker the other way round; SideNone for anything else (an arbiter, a stranger, an
// unfinished bounty, an envelope). Only one audit per bounty and side is backed, however
// many DIDs are bound to that wallet (Store.settleSide picks the latest); every other accepted audit
// counts unbacked (a tenth of the weight; see docs/REPUTATION.md). With a side, the verdict
// carries what the bounty settled, which the backed audit's weight scales with.
func (r *Rules) Check(ctx context.Context, a *Audit) (Verdict, error) {
	if r.Agents != nil { // nil when scoring a log's head: every logged subject counts (ScoreLog)
		known, err := r.Agents.Known(ctx, a.Subject)
		if err != nil {
			return Verdict{}, err
		}
		if !known {
			return Verdict{}, &AuditError{Err: ErrUnknownSubject, Detail: a.Subject}
		}
	}
	auditorWallets, err := r.Wallets.WalletsOf(ctx, a.Auditor)
	if err != nil {
		return Verdict{}, err
	}
	subjectWallets, err := r.Wallets.WalletsOf(ctx, a.Subject)
	if err != nil {
		return Verdict{}, err
	}
	for _, w := range auditorWallets {
		if slices.Contains(subjectWallets, w) {
			return Verdict{}, &AuditError{Err: ErrSameWallet, Detail: w.Hex()}
		}
	}
	none := Verdict{AuditorBound: len(auditorWallets) > 0}
	if a.Bounty == nil {
		return none, nil
	}
	if err := r.sameDeployment(a.Bounty); err != nil {
		return Verdict{}, err
	}
	facts, ok, err := r.Bounties.Bounty(ctx, a.Bounty.ID)
	if err != nil {
		return Verdict{}, err
	}
	if !ok {
		return Verdict{}, &AuditError{Err: ErrUnknownBounty, Detail: fmt.Sprintf("bounty %d", a.Bounty.ID)}
	}
	switch {
	case !facts.Finished:
		return none, nil
	case slices.Contains(auditorWallets, facts.Poster) && slices.Contains(subjectWallets, facts.Worker):
		return Verdict{Side: SidePoster, Settled: facts.settled(), AuditorBound: true}, nil
	case slices.Contains(auditorWallets, facts.Worker) && slices.Contains(subjectWallets, facts.Poster):
		return Verdict{Side: SideWorker, Settled: facts.settled(), AuditorBound: true}, nil
	}
	return none, nil
}

func (r *Rules) sameDeployment(ref *identity.BountyRef) error {
	if ref.ChainID != r.ChainID || !strings.EqualFold(ref.Escrow, r.Escrow.Hex()) {
		return &AuditError{Err: ErrForeignBounty, Detail: fmt.Sprintf("chain %d escrow %s; this node settles on chain %d escrow %s",
			ref.ChainID, ref.Escrow, r.ChainID, r.Escrow.Hex())}
	}
	return nil
}
