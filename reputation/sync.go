package reputation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// Anti-entropy of audits. A node that was away catches up in two ways:
//   - the audits of epochs still open are a set (AuditSet) reconciled with peers like any
//     other, each checked as if it came by gossip;
//   - the epochs peers closed while it was away are fetched as log leaves, epoch by epoch: the
//     peer's signed head of the epoch, then the audits from this node's log size up to the
//     head's, which must give exactly the head's root on top of this node's log. The leaves
//     are what the log commits to, so a peer that sends other audits, or signs a head its
//     leaves do not give, is caught by the hashes and penalized.
//
// The node closes no epoch of its own until its first round of anti-entropy is over
// (ServiceConfig.Ready), so a node back from a long absence adopts the epochs the network
// closed instead of closing them again with the part of their audits it had.

// Names in the sync protocol.
const (
	AuditSet      = "audits"
	logHeadsKind  = "audit-log.heads"
	logLeavesKind = "audit-log.leaves"
)

type headsRequest struct {
	From uint64 `json:"from"`
}

type leavesRequest struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// AttachSync makes the service take part in anti-entropy through sy: it offers the audits of
// open epochs as AuditSet, answers for its log's heads and leaves, and in each round catches
// its log up with the peer's. check verifies envelopes other nodes kept
// (identity.Service.CheckArchived).
func (s *Service) AttachSync(sy *p2p.Syncer, check EnvelopeVerifier) {
	sy.AddSet(AuditSet, &auditSet{s: s, check: check, window: maxSyncAudits})
	if s.cfg.Log == nil {
		return
	}
	l := s.cfg.Log
	sy.Handle(logHeadsKind, func(ctx context.Context, _ peer.ID, body json.RawMessage) (any, error) {
		var r headsRequest
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("heads request: %v", err)
		}
		return l.HeadsFrom(ctx, r.From, maxHeadsAnswer)
	})
	sy.Handle(logLeavesKind, func(ctx context.Context, _ peer.ID, body json.RawMessage) (any, error) {
		var r leavesRequest
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, fmt.Errorf("leaves request: %v", err)
		}
		if r.To < r.From || r.To-r.From > maxLeavesAnswer {
			return nil, fmt.Errorf("leaves %d to %d: at most %d at once", r.From, r.To, maxLeavesAnswer)
		}
		envs, err := l.Envelopes(ctx, r.From, r.To)
		if err != nil {
			return nil, err
		}
		// Within the answer's bound: the asker asks again from where this stops.
		total := 0
		for i, e := range envs {
			if total += len(e)*4/3 + 4; total > maxLeavesBytes && i > 0 {
				return envs[:i], nil
			}
		}
		return envs, nil
	})
	sy.OnRound(func(ctx context.Context, ask p2p.Asker) error {
		n, err := s.catchUpLog(ctx, ask, check)
		if n > 0 {
			s.cfg.Logger.Info("audit log caught up from a peer", "peer", ask.Peer(), "leaves", n, "size", l.Head().Size)
		}
		if errors.Is(err, ErrDiverged) {
			s.cfg.Logger.Warn("reputation: a peer's audit log differs from this node's", "peer", ask.Peer(), "err", err)
			return nil // not the peer's fault, and nothing this round can mend
		}
		return err
	})
}

// catchUpLog adopts, epoch by epoch, the epochs the peer closed beyond this node's log, and
// says how many leaves it added. A catch-up that ends with this node's log as far as the
// peer's that a quorum vouched for puts the log in step (LogSync); one that meets an epoch no
// quorum vouched for, or that other peers contradict, leaves it alone.
func (s *Service) catchUpLog(ctx context.Context, ask p2p.Asker, check EnvelopeVerifier) (int, error) {
	added, inStep, err := s.catchUpLogFrom(ctx, ask, check)
	switch {
	case errors.Is(err, ErrNoQuorum) || errors.Is(err, ErrDiverged):
		s.noteLogSync(LogAlone, err.Error())
	case err == nil && inStep:
		s.noteLogSync(LogInStep, "")
	}
	return added, err
}

// catchUpLogFrom is catchUpLog's work; inStep says the catch-up ended with this node's log
// where the peer's is (a peer behind it, or one that errs, says nothing either way).
func (s *Service) catchUpLogFrom(ctx context.Context, ask p2p.Asker, check EnvelopeVerifier) (added int, inStep bool, err error) {
	l := s.cfg.Log
	for added < MaxCatchUpLeaves {
		local := l.Head()
		var heads []Head
		if err := ask.Ask(ctx, logHeadsKind, headsRequest{From: local.Size}, &heads); err != nil {
			return added, false, err
		}
		if local.Size > 0 {
			// The peer's log must hold this node's latest head as it is: same size, same root.
			if len(heads) == 0 {
				return added, false, nil // the peer is behind
			}
			if heads[0].Size != local.Size || heads[0].Root != local.Root {
				if ok, err := s.staked(ctx, heads[0]); err != nil || !ok {
					// No node's log: no error of the peer's or this node's, but no peer that
					// keeps step with it either.
					if err == nil {
						s.noteLogSync(LogAlone, fmt.Sprintf("peer %s's audit log differs from this node's at size %d, and no staked node signed its head: this node keeps its own",
							ask.Peer(), local.Size))
					}
					return added, false, err
				}
				return added, false, fmt.Errorf("%w: at size %d this node's root is %s; the peer's first head from there is size %d, root %s",
					ErrDiverged, local.Size, local.Root, heads[0].Size, heads[0].Root)
			}
			heads = heads[1:]
		}
		if len(heads) == 0 {
			return added, true, nil
		}
		h := heads[0]
		signer, err := checkHead(h, local)
		if err != nil {
			return added, false, err
		}
		if !l.closable(h.Epoch, s.cfg.Now()) {
			// Not over here yet: no honest node closes it before its grace has passed, and
			// adopting it would shut out the audits still on their way.
			return added, false, nil
		}
		if err := s.quorum(ctx, ask, h, local, signer); err != nil {
			return added, false, err
		}
		n, err := s.adoptEpoch(ctx, ask, check, h, local.Size)
		added += n
		if err != nil {
			return added, false, err
		}
	}
	return added, false, nil
}

// quorum returns nil when h, a head the peer signed as signer, may be adopted: Quorum
// distinct staked nodes signed it (the peer's signer, and those of the other peers asked,
// none of which contradicts it), or its signer, a staked node, anchored it on chain. Else
// ErrNoQuorum (nobody penalized), or ErrDiverged when another peer contradicts it.
func (s *Service) quorum(ctx context.Context, ask p2p.Asker, h, local Head, signer string) error {
	first, staked, err := s.vouch(ctx, signer)
	if err != nil {
		return err
	}
	voices := map[string]bool{}
	if staked {
		voices[first.did] = true
		if ok, err := s.anchored(ctx, first, h); err != nil {
			return err
		} else if ok {
			// Adopted on its anchor, unless another peer's log contradicts it.
			_, err := s.confirm(ctx, ask, h, local)
			return err
		}
	}
	others, err := s.confirm(ctx, ask, h, local)
	if err != nil {
		return err
	}
	for _, o := range others {
		v, ok, err := s.vouch(ctx, o)
		if err != nil {
			return err
		}
		if ok {
			voices[v.did] = true
		}
	}
	if len(voices) >= s.cfg.Quorum {
		return nil
	}
	who := "a DID that is no staked node"
	if staked {
		who = "a staked node"
	}
	return fmt.Errorf("%w: peer %s offers epoch %d (size %d, root %s) signed by %s (%s); %d staked node(s) signed it of the %d needed, and its signer did not anchor it on chain: this node keeps its own log",
		ErrNoQuorum, ask.Peer(), h.Epoch, h.Size, h.Root, signer, who, len(voices), s.cfg.Quorum)
}

// confirm asks up to confirmers other peers for their heads after local and returns
// ErrDiverged if any holds a head that contradicts h, one of the same epoch or size with
// another root, signed by a staked node (a head any free DID signs is no node's word, for or
// against: one unstaked peer cannot veto an epoch the network closed); else the signers of the
// heads that are h itself (each head's own signature checked, so a peer cannot lend another's
// name). Only a signed head contradicts: a peer can leave heads out of what it relays, so
// what is missing from its answer proves nothing. A peer that lies about an epoch must so cut
// the node off from every honest peer it asks; one that is behind, has diverged from this
// node itself, or answers with more heads than a node sends, says nothing either way.
func (s *Service) confirm(ctx context.Context, ask p2p.Asker, h, local Head) ([]string, error) {
	var signers []string
	for _, other := range ask.Others(confirmers) {
		var heads []Head
		if err := other.Ask(ctx, logHeadsKind, headsRequest{From: local.Size}, &heads); err != nil || len(heads) > maxHeadsAnswer {
			continue
		}
		if local.Size > 0 && (len(heads) == 0 || heads[0].Size != local.Size || heads[0].Root != local.Root) {
			continue
		}
		for _, o := range heads {
			if o.Epoch != h.Epoch && o.Size != h.Size {
				continue
			}
			if o.Epoch == h.Epoch && o.Size == h.Size && o.Root == h.Root {
				if signer, err := headSigner(o); err == nil {
					signers = append(signers, signer)
				}
				break
			}
			ok, err := s.staked(ctx, o)
			if err != nil {
				return nil, err
			}
			if ok {
				return nil, fmt.Errorf("%w: for epoch %d peer %s says size %d root %s, peer %s says size %d root %s",
					ErrDiverged, h.Epoch, ask.Peer(), h.Size, h.Root, other.Peer(), o.Size, o.Root)
			}
		}
	}
	return signers, nil
}

// checkHead checks that h, a head a peer sent as the one after local, is signed and extends
// local, and returns its signer's DID.
func checkHead(h, local Head) (string, error) {
	signer, err := headSigner(h)
	if err != nil {
		return "", err
	}
	if h.Size <= local.Size || (local.Size > 0 && h.Epoch <= local.Epoch) {
		return "", fmt.Errorf("%w: head of epoch %d, size %d, does not extend epoch %d, size %d", p2p.ErrBadItem, h.Epoch, h.Size, local.Epoch, local.Size)
	}
	if h.Size-local.Size > MaxEpochLeaves {
		return "", fmt.Errorf("%w: the peer's epoch %d holds %d audits; this node adopts at most %d at once", ErrDiverged, h.Epoch, h.Size-local.Size, MaxEpochLeaves)
	}
	return signer, nil
}

// staked says whether h's signature checks and its signer is a staked node.
func (s *Service) staked(ctx context.Context, h Head) (bool, error) {
	signer, err := headSigner(h)
	if err != nil {
		return false, nil
	}
	_, ok, err := s.vouch(ctx, signer)
	return ok, err
}

// headSigner checks h's signature covers h and returns the signer's DID.
func headSigner(h Head) (string, error) {
	payload, signer, err := identity.VerifyJWS([]byte(h.Signed), HeadType)
	if err != nil {
		return "", fmt.Errorf("%w: head of epoch %d: %w", p2p.ErrBadItem, h.Epoch, err)
	}
	var signed struct {
		Size   uint64      `json:"size"`
		Root   merkle.Hash `json:"root"`
		Epoch  int64       `json:"epoch"`
		Closed int64       `json:"closed"`
	}
	if err := json.Unmarshal(payload, &signed); err != nil || signed.Size != h.Size || signed.Root != h.Root || signed.Epoch != h.Epoch {
		return "", fmt.Errorf("%w: head of epoch %d: its signature covers another head", p2p.ErrBadItem, h.Epoch)
	}
	return signer, nil
}

// adoptEpoch fetches the leaves of h (those after size from), records their audits, and
// appends the epoch; a quorum of staked nodes vouched for h (Service.quorum), so the audits
// this node holds that the epoch leaves out no longer count here, as on every node that
// logged without them.
func (s *Service) adoptEpoch(ctx context.Context, ask p2p.Asker, check EnvelopeVerifier, h Head, from uint64) (int, error) {
	var raws [][]byte
	for at := from; at < h.Size; {
		to := min(at+maxLeavesAnswer, h.Size)
		var part [][]byte
		if err := ask.Ask(ctx, logLeavesKind, leavesRequest{From: at, To: to}, &part); err != nil {
			return 0, err
		}
		switch {
		case len(part) > int(to-at):
			return 0, fmt.Errorf("%w: %d leaves for %d to %d", p2p.ErrBadItem, len(part), at, to)
		case len(part) == 0:
			return 0, fmt.Errorf("the peer sent no leaves from %d", at)
		}
		raws = append(raws, part...)
		at += uint64(len(part))
	}
	leaves := make([]merkle.Hash, len(raws))
	for i, raw := range raws {
		leaves[i] = merkle.LeafHash(raw)
		if i > 0 && leaves[i-1].String() >= leaves[i].String() {
			return 0, fmt.Errorf("%w: epoch %d's leaves are not in order", p2p.ErrBadItem, h.Epoch)
		}
	}
	// The hashes first: they say whether these are the audits the head commits to, before
	// any of them is checked or stored.
	if root, err := s.cfg.Log.rootWith(leaves, h.Size); err != nil {
		return 0, err
	} else if root != h.Root {
		return 0, fmt.Errorf("%w: epoch %d's leaves give root %s, the signed head says %s", p2p.ErrBadItem, h.Epoch, root, h.Root)
	}
	for _, raw := range raws {
		if err := s.recordLogged(ctx, check, raw, h.Epoch); err != nil {
			return 0, err
		}
	}
	before := (h.Epoch + 1) * int64(s.cfg.Log.cfg.Epoch/time.Second)
	if _, err := s.cfg.Log.adopt(ctx, h, leaves, s.cfg.Now()); err != nil {
		return 0, err
	}
	if err := s.dropUnlogged(ctx, before); err != nil {
		return len(raws), err
	}
	s.markDirty()
	return len(raws), nil
}

// dropUnlogged forgets the audits made before (unix seconds) that the log does not hold, as
// every node that logged without them never counted them, and has the scores computed again
// from the store.
func (s *Service) dropUnlogged(ctx context.Context, before int64) error {
	keys, err := s.cfg.Store.dropUnlogged(ctx, before)
	if err != nil || len(keys) == 0 {
		return err
	}
	s.cfg.Logger.Warn("reputation: audits this node took were left out of the log the network closed; they no longer count", "audits", len(keys))
	sides := map[[2]string]bool{}
	for _, k := range keys {
		if k.side != SideNone && !sides[[2]string{k.target, string(k.side)}] {
			sides[[2]string{k.target, string(k.side)}] = true
			if _, err := s.cfg.Store.settleSide(ctx, k.target, k.side); err != nil {
				return err
			}
		}
	}
	s.reload()
	return nil
}

// recordLogged stores an audit of an epoch a peer closed, whose head this node has checked:
// what is checked now is what cannot have changed since it was logged (the signature, the
// shape, its epoch). The rest passes the same acceptance rules as gossip, with one difference:
// the leaf is kept whatever they say, since the log's root needs it. An audit the rules refuse
// (its auditor and subject bound to one wallet, a bounty of another deployment) counts 0 here,
// as every node's recheck makes an audit that no longer passes count (Verdict.Refused); one
// whose subject or bounty this node's indexes lack counts unbacked, as gossip would hold it and
// take it once they catch up. An audit by a key closed since is kept as logged (the key signed
// it while open). No peer is blamed for any of these: the facts may have changed after it
// logged the audit.
func (s *Service) recordLogged(ctx context.Context, check EnvelopeVerifier, raw []byte, epoch int64) error {
	v, err := check(ctx, raw)
	var ve *identity.VerifyError
	if errors.As(err, &ve) && ve.Authentic != nil && (errors.Is(err, identity.ErrRevoked) || errors.Is(err, identity.ErrRotated)) {
		v, err = ve.Authentic, nil
	}
	if err != nil {
		if identity.Forged(err) {
			return fmt.Errorf("%w: a logged audit: %w", p2p.ErrBadItem, err)
		}
		return err
	}
	if s.cfg.Log.epochOf(v.Envelope.IssuedAt) != epoch { // an audit's time is its iat
		return fmt.Errorf("%w: an audit of another epoch than %d in its leaves", p2p.ErrBadItem, epoch)
	}
	a, err := ParseAudit(&v.Envelope)
	if err != nil {
		return fmt.Errorf("%w: a logged audit: %w", p2p.ErrBadItem, err)
	}
	verdict, err := s.cfg.Rules.Check(ctx, a)
	verdict, err = refusedVerdict(verdict, err)
	if err != nil {
		return err // an index could not be read: next round
	}
	_, err = s.keep(ctx, a, raw, verdict)
	if err == nil || errors.Is(err, ErrDuplicate) {
		return nil
	}
	return err
}

// auditSet offers the audits of the epochs the log has not closed.
type auditSet struct {
	s      *Service
	check  EnvelopeVerifier
	window int // the most audits listed
}

func (a *auditSet) since() int64 {
	if l := a.s.cfg.Log; l != nil {
		l.mu.RLock()
		defer l.mu.RUnlock()
		return (l.last + 1) * int64(l.cfg.Epoch/time.Second)
	}
	return a.s.cfg.Now().Add(-HeldTTL).Unix()
}

func (a *auditSet) IDs(ctx context.Context) ([]p2p.ID, error) {
	st := a.s.cfg.Store
	// Auditors bound on chain first, then each auditor's newest in turn: neither fresh keys
	// nor one auditor's flood push others' audits out before their epoch closes.
	rows, err := st.db.QueryContext(ctx, `SELECT leaf FROM (
			SELECT leaf, time, auditor_bound, ROW_NUMBER() OVER (PARTITION BY auditor ORDER BY time DESC, leaf) AS turn
			FROM reputation_audits WHERE chain = ? AND time >= ?)
		ORDER BY auditor_bound DESC, turn, time DESC, leaf LIMIT ?`, st.chain, a.since(), a.window)
	if err != nil {
		return nil, fmt.Errorf("reputation: list audits: %w", err)
	}
	defer rows.Close()
	var ids []p2p.ID
	for rows.Next() {
		var leaf string
		if err := rows.Scan(&leaf); err != nil {
			return nil, err
		}
		h, err := parseHash(leaf)
		if err != nil {
			return nil, err
		}
		ids = append(ids, p2p.ID(h))
	}
	return ids, rows.Err()
}

func (a *auditSet) Get(ctx context.Context, ids []p2p.ID) ([][]byte, error) {
	st := a.s.cfg.Store
	var out [][]byte
	for _, id := range ids {
		var raw []byte
		err := st.db.QueryRowContext(ctx, `SELECT envelope FROM reputation_audits WHERE chain = ? AND leaf = ?`, st.chain, merkle.Hash(id).String()).Scan(&raw)
		if err == nil {
			out = append(out, raw)
		}
	}
	return out, nil
}

func (a *auditSet) Put(ctx context.Context, _ peer.ID, item []byte) error {
	if len(item) > identity.MaxEnvelopeSize {
		return fmt.Errorf("%w: an audit of %d bytes", p2p.ErrBadItem, len(item))
	}
	v, err := a.check(ctx, item)
	if err != nil {
		if identity.Forged(err) {
			return fmt.Errorf("%w: %w", p2p.ErrBadItem, err)
		}
		return err
	}
	_, err = a.s.submit(ctx, v, item)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrBadAudit), errors.Is(err, ErrForeignBounty):
		// Its shape, or a bounty of another deployment: wrong on every node, at any time.
		// (A shared wallet is not: a binding made after the peer took the audit.)
		return fmt.Errorf("%w: %w", p2p.ErrBadItem, err)
	case waitsForFacts(err):
		if herr := a.s.hold(ctx, v, item); herr != nil {
			return herr
		}
	}
	return err
}
