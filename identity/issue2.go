package identity

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The node's VC 2.0 credentials: what it issues on GET /v1/credentials/{did}/... and the
// status lists it publishes on GET /v1/status/{n}. Each credential of a DID that holds a
// status index names that index; the list's bit is set once the chain closed the DID
// (revoked, or rotated away), read from the chain's index (Verifier.KeyStatus), so a
// revocation on chain shows in every credential the node issued for the DID.

// statusCache keeps the bits last computed per list, and the list credential signed over
// them for the last base URL asked: the bits cost a key-status lookup per index, the signed
// list a gzip of 16 KiB and a signature, and anyone may ask.
type statusCache struct {
	mu    sync.Mutex
	lists map[int]cachedList
	gen   uint64 // computations so far
}

type cachedList struct {
	at   time.Time
	bits []byte
	// gen numbers the computation; signed is the list's credential over bits for the base URL
	// base, once asked for: while bits are current a request costs no gzip and no signature.
	gen          uint64
	base, signed string
}

// credentialStatus gives did its status entry when it may hold one (staked), or nil: an
// unstaked DID, or full lists, get none, and the credential a short lifetime instead.
func (s *Service) credentialStatus(ctx context.Context, did, base string, staked bool) (*StatusEntry, time.Duration, error) {
	if !staked {
		return nil, UnstatusedCredentialLifetime, nil
	}
	pos, err := s.cfg.Store.StatusPosition(ctx, did)
	if errors.Is(err, ErrStatusListsFull) {
		return nil, UnstatusedCredentialLifetime, nil
	}
	if err != nil {
		return nil, 0, err
	}
	list, index := statusPosition(pos)
	return NewStatusEntry(StatusListURL(base, list), index), StatusCredentialLifetime, nil
}

// openDID refuses a DID the chain closed: the node issues it nothing new.
func (s *Service) openDID(ctx context.Context, did string) error {
	st, err := s.cfg.Verifier.KeyStatus(ctx, did)
	if err != nil {
		return err
	}
	if st.Closed() {
		return fmt.Errorf("%w: %s", ErrDeactivated, st.describe(did))
	}
	return nil
}

// RegistrationCredential issues the VC 2.0 registration credential (application/vc+jwt) of
// a DID the node issued or registered, signed by the node's DID. base is the node's public
// API URL, under which the status list is named; staked says the chain holds the minimum
// stake for the DID, which gives it a status index. It returns ErrNotFound for a DID the
// node does not know and ErrDeactivated for one the chain closed.
func (s *Service) RegistrationCredential(ctx context.Context, did, base string, staked bool) (string, error) {
	rec, err := s.cfg.Store.Record(ctx, did)
	if err != nil {
		return "", err
	}
	if err := s.openDID(ctx, did); err != nil {
		return "", err
	}
	st, life, err := s.credentialStatus(ctx, did, base, staked)
	if err != nil {
		return "", err
	}
	now := s.cfg.Now()
	issuer := s.NodeDID()
	c, err := NewCredential(issuer, []string{RegistrationCredentialType}, now, now.Add(life),
		RegistrationSubject{ID: did, RegisteredWith: issuer, Registration: rec.Kind})
	if err != nil {
		return "", err
	}
	c.ID = CredentialID(issuer, did, RegistrationCredentialType, c.ValidFrom)
	c.CredentialStatus = st
	return s.cfg.Node.IssueCredential(c)
}

// RegistrationCredentialV1 is the VC Data Model 1.1 VC-JWT the node issued (with
// aries-framework-go) when it registered did, for verifiers that read only 1.1. It returns
// ErrNotFound for a DID the node does not know, ErrDeactivated for one the chain closed.
func (s *Service) RegistrationCredentialV1(ctx context.Context, did string) (string, error) {
	rec, err := s.cfg.Store.Record(ctx, did)
	if err != nil {
		return "", err
	}
	if err := s.openDID(ctx, did); err != nil {
		return "", err
	}
	if rec.Credential == "" {
		return "", fmt.Errorf("%w: no VC 1.1 credential kept for %s", ErrNotFound, did)
	}
	return rec.Credential, nil
}

// StakeCredential issues the VC 2.0 stake credential of subj (what the chain said at
// subj.Block; the caller read it), signed by the node's DID, with the DID's status entry:
// the stake is the minimum or more, so it holds one. It returns ErrDeactivated for a DID the
// chain closed.
func (s *Service) StakeCredential(ctx context.Context, subj StakeSubject, base string) (string, error) {
	if _, err := ParseDID(subj.ID); err != nil {
		return "", err
	}
	if err := s.openDID(ctx, subj.ID); err != nil {
		return "", err
	}
	st, life, err := s.credentialStatus(ctx, subj.ID, base, true)
	if err != nil {
		return "", err
	}
	now := s.cfg.Now()
	issuer := s.NodeDID()
	c, err := NewCredential(issuer, []string{StakeCredentialType}, now, now.Add(life), subj)
	if err != nil {
		return "", err
	}
	c.ID = CredentialID(issuer, subj.ID, StakeCredentialType, subj.Wallet, fmt.Sprint(subj.ChainID), subj.BlockHash, c.ValidFrom)
	c.CredentialStatus = st
	return s.cfg.Node.IssueCredential(c)
}

// StatusList issues the status list credential of list n (application/vc+jwt): bit i is set
// when the chain closed the DID that holds index i. It is computed at most once per
// ServiceConfig.StatusCacheTTL. It returns ErrNotFound for a list the node does not use (yet).
func (s *Service) StatusList(ctx context.Context, n int, base string) (string, error) {
	if n < 0 || n >= MaxStatusLists {
		return "", fmt.Errorf("%w: status list %d (the node keeps lists 0 to %d)", ErrNotFound, n, MaxStatusLists-1)
	}
	list, err := s.statusBits(ctx, n, s.cfg.Now())
	if err != nil {
		return "", err
	}
	if list.signed != "" && list.base == base {
		return list.signed, nil
	}
	c, err := StatusListCredential(s.NodeDID(), StatusListURL(base, n), list.bits, list.at, StatusListLifetime)
	if err != nil {
		return "", err
	}
	signed, err := s.cfg.Node.IssueCredential(c)
	if err != nil {
		return "", err
	}
	s.status.mu.Lock()
	if cur, ok := s.status.lists[n]; ok && cur.gen == list.gen {
		cur.base, cur.signed = base, signed
		s.status.lists[n] = cur
	}
	s.status.mu.Unlock()
	return signed, nil
}

// statusBits is list n's bitstring at now: the cached one (with its signed credential, once
// signed) while it is younger than StatusCacheTTL, else computed from the chain's key states.
func (s *Service) statusBits(ctx context.Context, n int, now time.Time) (cachedList, error) {
	s.status.mu.Lock()
	defer s.status.mu.Unlock()
	if c, ok := s.status.lists[n]; ok && now.Sub(c.at) >= 0 && now.Sub(c.at) < s.cfg.StatusCacheTTL {
		return c, nil
	}
	holders, lists, err := s.cfg.Store.statusHolders(ctx, n)
	if err != nil {
		return cachedList{}, err
	}
	if n >= lists {
		return cachedList{}, fmt.Errorf("%w: status list %d is not in use (the node has %d)", ErrNotFound, n, lists)
	}
	bits := NewStatusList()
	for _, h := range holders {
		st, err := s.cfg.Verifier.KeyStatus(ctx, h.did)
		if err != nil {
			return cachedList{}, err
		}
		if st.Closed() {
			SetStatusBit(bits, h.index)
		}
	}
	if s.status.lists == nil {
		s.status.lists = make(map[int]cachedList, MaxStatusLists)
	}
	s.status.gen++
	c := cachedList{at: now, bits: bits, gen: s.status.gen}
	s.status.lists[n] = c
	return c, nil
}

// ForgetStatusLists drops the status lists computed so far: the chain's index just closed a
// DID, so the next request computes them again and shows it.
func (s *Service) ForgetStatusLists() {
	s.status.mu.Lock()
	defer s.status.mu.Unlock()
	clear(s.status.lists)
}
