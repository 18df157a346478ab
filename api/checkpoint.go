package api

import (
	"errors"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/reputation/verify"
)

// The log's latest head as a C2SP checkpoint (c2sp.org/tlog-checkpoint, a signed note), for
// the transparency-log ecosystem's tools and reputation/verify.OpenCheckpoint. The node signs
// it when first asked for a head, over the head it serves at /v1/log/head, and serves those
// bytes again until the head changes: anyone may ask, and a request costs no signature.
// Ed25519 and secp256k1 signatures are deterministic, so a restarted node signs the same
// bytes for the same head.

// signedCheckpoint holds the last checkpoint the node signed and the head it signed.
type signedCheckpoint struct {
	mu   sync.Mutex
	cp   verify.Checkpoint
	note []byte
}

// get returns cp's signed note (cp has no extensions), signing it with sign unless it is
// the one held.
func (s *signedCheckpoint) get(cp verify.Checkpoint, sign func(verify.Checkpoint) ([]byte, error)) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.note != nil && s.cp.Origin == cp.Origin && s.cp.Size == cp.Size && s.cp.Root == cp.Root {
		return s.note, nil
	}
	note, err := sign(cp)
	if err != nil {
		return nil, err
	}
	s.cp, s.note = cp, note
	return note, nil
}

// ErrNoCheckpoint: the node cannot sign checkpoints (its identity service signs no notes, or
// the deployment has no RootAnchor to name the log's origin by).
var ErrNoCheckpoint = errors.New("api: this node signs no checkpoints")

// noteSigner is the identity service's signing of note texts with the node's key
// (identity.Service.SignNoteAsNode).
type noteSigner interface {
	SignNoteAsNode(text []byte) ([]byte, error)
}

// CheckpointOrigin is the origin, and key name, of the node's checkpoints: chain, RootAnchor
// and node DID (verify.Origin); ok is false without a RootAnchor.
func (s *Server) CheckpointOrigin() (origin string, ok bool) {
	for _, c := range s.cfg.Chain.Contracts {
		if c.Name == "RootAnchor" {
			return verify.Origin(s.cfg.Chain.ID, c.Address.Hex(), s.cfg.Identity.NodeDID()), true
		}
	}
	return "", false
}

// logCheckpoint: GET /v1/log/checkpoint.
func (s *Server) logCheckpoint(c echo.Context) error {
	signer, ok := s.cfg.Identity.(noteSigner)
	if !ok {
		return ErrNoCheckpoint
	}
	origin, ok := s.CheckpointOrigin()
	if !ok {
		return ErrNoCheckpoint
	}
	h := s.cfg.AuditLog.Head()
	note, err := s.checkpoint.get(verify.Checkpoint{Origin: origin, Size: h.Size, Root: h.Root}, func(cp verify.Checkpoint) ([]byte, error) {
		return verify.SignCheckpoint(cp, s.cfg.Identity.NodeDID(), signer.SignNoteAsNode)
	})
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", note)
}
