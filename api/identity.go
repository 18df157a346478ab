package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/identity"
)

// Identity is what the DID and envelope routes need. Errors follow identity's contract:
// ErrInvalidDID, ErrUnsupportedMethod, ErrUnsupportedKey, ErrNotFound, ErrDeactivated (with
// the resolution), ErrBadChallenge, ErrBadProof, ErrAlreadyRegistered, or a
// *identity.VerifyError for a refused envelope.
type Identity interface {
	NodeDID() string
	// SignAsNode signs payload as a compact JWS of type typ with the node's DID key (the
	// node's A2A cards).
	SignAsNode(payload []byte, typ string) (string, error)
	Challenge(ctx context.Context) (identity.Challenge, error)
	Register(ctx context.Context, proof []byte) (*identity.Issued, error)
	Resolve(ctx context.Context, did string, format identity.DocFormat) (*identity.Resolution, error)
	// VerifyEnvelope verifies an envelope that acts, spending its nonce; CheckEnvelope only
	// reports on one, spending nothing.
	VerifyEnvelope(ctx context.Context, raw []byte) (*identity.Verified, error)
	CheckEnvelope(ctx context.Context, raw []byte) (*identity.Verified, error)
}

var _ Identity = (*identity.Service)(nil)

func readBody(c echo.Context) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(c.Request().Body, maxBody+1))
	if err != nil {
		return nil, bodyError(err)
	}
	if len(b) > maxBody {
		return nil, ErrTooLarge
	}
	return b, nil
}

// bindJSON decodes a JSON request body into v, refusing unknown fields.
func bindJSON(c echo.Context, v any) error {
	b, err := readBody(c)
	if err != nil {
		return err
	}
	return bindJSONBytes(b, v)
}

// bindJSONBytes decodes a JSON body already read into v, refusing unknown fields.
func bindJSONBytes(b []byte, v any) error {
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return withDetail(ErrBadRequest, "%v", err)
	}
	return nil
}

func (s *Server) challenge(c echo.Context) error {
	ch, err := s.cfg.Identity.Challenge(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		identity.Challenge
		Audience string `json:"audience"`
	}{ch, s.cfg.Identity.NodeDID()})
}

func (s *Server) register(c echo.Context) error {
	var req RegisterRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if req.Proof == "" {
		return withDetail(ErrBadRequest, "proof is required")
	}
	issued, err := s.cfg.Identity.Register(c.Request().Context(), []byte(req.Proof))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, issued)
}

// verifyEnvelope takes the envelope as the raw body (compact or JSON serialization).
func (s *Server) verifyEnvelope(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	v, err := s.cfg.Identity.CheckEnvelope(c.Request().Context(), body)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, VerifyResponse{Valid: true, Sender: v.Envelope.Sender, Signers: v.Signers, Payload: v.Payload})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own document types reach here: they always marshal
	}
	return b
}
