package reputation

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/reputation/merkle"
)

// Who may speak for the log. A did:key costs nothing, so a head signed by any key is no one's
// word: a log head counts only when a node signed it, and a node is a DID the chain records
// with stake (bound to a wallet in StakeRegistry, holding at least the deployment's minimum
// stake). A node adopts an epoch a peer closed only on positive agreement: Quorum distinct
// nodes signed that very head (the peer's signer and the other peers it asks), or the head's
// signer anchored it on chain from its bound wallet. Silence, a peer that errs, lags or is busy,
// is no agreement. A node that cannot get it keeps its own log (it closes the epochs itself
// with the audits it has) and says so (Service.LogSync).

// Nodes says which DIDs speak for nodes.
type Nodes interface {
	// Node returns the wallet did is bound to on chain and ok=true when it is bound and
	// holds at least the minimum stake; ok=false otherwise. An error is an index that could
	// not be read.
	Node(ctx context.Context, did string) (wallet common.Address, ok bool, err error)
}

// Anchors reads RootAnchor.
type Anchors interface {
	// RootAt returns the root wallet anchored at tree size size; the zero hash when none.
	RootAt(ctx context.Context, wallet common.Address, size uint64) (merkle.Hash, error)
}

// ErrNoQuorum reports a peer's epoch that no quorum of staked nodes vouched for: it is not
// adopted, and no one is penalized (an unstaked signer may be an honest node not yet staked).
var ErrNoQuorum = errors.New("reputation: no quorum of staked nodes signed the peer's log head")

// LogSync is how the log's catch-up from peers last went, for /v1/info.
type LogSync struct {
	// State is "in-step" (the last round adopted what peers offered, or there was nothing to
	// adopt), "alone" (peers offered epochs no quorum of staked nodes signed, or that other
	// peers contradicted: the node keeps its own log), or "" before the first round.
	State string `json:"state,omitempty"`
	// Detail says what the last refused head was, and why.
	Detail string    `json:"detail,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	// Quorum is how many distinct staked nodes must sign a head before it is adopted.
	Quorum int `json:"quorum"`
}

// Log sync states.
const (
	LogInStep = "in-step"
	LogAlone  = "alone"
)

// LogSync says how the log's catch-up from peers last went.
func (s *Service) LogSync() LogSync {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := s.logSync
	out.Quorum = s.cfg.Quorum
	return out
}

// noteLogSync records the outcome of one catch-up with a peer.
func (s *Service) noteLogSync(state, detail string) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if s.logSync.State != state {
		s.logSync.Since = s.cfg.Now()
	}
	s.logSync.State, s.logSync.Detail = state, detail
}

// voice is one node's word on a head: the staked DID that signed it, and its wallet.
type voice struct {
	did    string
	wallet common.Address
}

// vouch says whether signer, which signed a head, speaks for a node.
func (s *Service) vouch(ctx context.Context, signer string) (voice, bool, error) {
	if s.cfg.Nodes == nil {
		return voice{}, false, nil
	}
	w, ok, err := s.cfg.Nodes.Node(ctx, signer)
	if err != nil {
		return voice{}, false, fmt.Errorf("reputation: is %s a staked node: %w", signer, err)
	}
	return voice{did: signer, wallet: w}, ok, nil
}

// anchored says whether v's wallet anchored h's root at h's size on chain.
func (s *Service) anchored(ctx context.Context, v voice, h Head) (bool, error) {
	if s.cfg.Anchors == nil {
		return false, nil
	}
	root, err := s.cfg.Anchors.RootAt(ctx, v.wallet, h.Size)
	if err != nil {
		return false, fmt.Errorf("reputation: read the anchor of %s at size %d: %w", v.wallet.Hex(), h.Size, err)
	}
	return root == h.Root, nil
}
