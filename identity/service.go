package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// Issued is what the node returns for a DID it issued or registered.
type Issued struct {
	DID      string    `json:"did"`
	Kind     string    `json:"kind"` // hosted or registered
	Document *Document `json:"didDocument"`
	// Credential is the registration VC-JWT, signed by the node's DID.
	Credential string `json:"credential"`
}

// Resolution is a resolved DID: its document and what the node knows about it.
type Resolution struct {
	Document *Document        `json:"didDocument"`
	Metadata DocumentMetadata `json:"didDocumentMetadata"`
}

// DocumentMetadata follows the DID resolution spec's document metadata.
type DocumentMetadata struct {
	// Deactivated: the chain says a controller the DID bound revoked it or rotated it away.
	Deactivated bool `json:"deactivated,omitempty"`
	// Successor is the DID a rotation moved the agent to (a Surety extension of the
	// metadata, which DID Core leaves open).
	Successor string     `json:"successor,omitempty"`
	Created   *time.Time `json:"created,omitempty"`
	// Registration is "node", "hosted" or "registered" when this node issued or registered
	// the DID.
	Registration string `json:"registration,omitempty"`
}

// ServiceConfig wires a Service.
type ServiceConfig struct {
	Store    *Store
	Node     *Key
	Verifier *Verifier
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// DocCacheSize bounds the cache of derived DID documents; 0 means 4096.
	DocCacheSize int
	// ChainID and Registry are where wallet bindings must point: the node's chain and its
	// StakeRegistry.
	ChainID  uint64
	Registry common.Address
	// StatusCacheTTL is how long a computed status list is reused; 0 means
	// StatusListCacheTTL.
	StatusCacheTTL time.Duration
}

// Service is the node's identity: it issues and registers DIDs, resolves them, and
// verifies envelopes.
type Service struct {
	cfg  ServiceConfig
	mu   sync.RWMutex
	docs map[docKey]*Document
	// status keeps the status lists computed last (issue2.go).
	status statusCache
}

type docKey struct {
	did    string
	format DocFormat
}

// NewService builds the identity service.
func NewService(cfg ServiceConfig) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StatusCacheTTL == 0 {
		cfg.StatusCacheTTL = StatusListCacheTTL
	}
	if cfg.DocCacheSize == 0 {
		cfg.DocCacheSize = defaultCacheSize
	}
	return &Service{cfg: cfg, docs: make(map[docKey]*Document)}
}

// NodeDID is the node's own DID.
func (s *Service) NodeDID() string { return s.cfg.Node.DID.String() }

// CreateDID makes a key of type t for an agent the node hosts, keeps it encrypted, and
// issues the registration credential.
func (s *Service) CreateDID(ctx context.Context, t KeyType) (*Issued, error) {
	if t == "" {
		t = Ed25519
	}
	k, err := GenerateKey(t)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Store.PutKey(ctx, k, "hosted"); err != nil {
		return nil, err
	}
	return s.issue(ctx, k.DID, "hosted")
}

// Challenge issues a registration challenge.
func (s *Service) Challenge(ctx context.Context) (Challenge, error) {
	return s.cfg.Store.NewChallenge(ctx)
}

// challengeBody is the body of a registration proof envelope.
type challengeBody struct {
	Challenge string `json:"challenge"`
}

// Register records a DID an agent made itself. proof is an envelope signed by the DID's
// key, addressed to the node (`to` holds the node's DID), whose body is
// {"challenge": "<a challenge from Challenge>"}. It returns ErrBadProof, ErrBadChallenge,
// ErrAlreadyRegistered, or the envelope's *VerifyError.
func (s *Service) Register(ctx context.Context, proof []byte) (*Issued, error) {
	v, err := s.cfg.Verifier.Verify(ctx, proof)
	if err != nil {
		return nil, err
	}
	addressed := false
	for _, to := range v.Envelope.To {
		addressed = addressed || to == s.NodeDID()
	}
	if !addressed {
		return nil, fmt.Errorf("%w: the proof is not addressed to this node (%s)", ErrBadProof, s.NodeDID())
	}
	var body challengeBody
	if err := json.Unmarshal(v.Envelope.Body, &body); err != nil || body.Challenge == "" {
		return nil, fmt.Errorf("%w: body must be {\"challenge\": ...}", ErrBadProof)
	}
	if err := s.cfg.Store.UseChallenge(ctx, body.Challenge); err != nil {
		return nil, err
	}
	d, err := ParseDID(v.Envelope.Sender)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Store.Register(ctx, d); err != nil {
		return nil, err
	}
	return s.issue(ctx, d, "registered")
}

func (s *Service) issue(ctx context.Context, d DID, kind string) (*Issued, error) {
	vc, err := IssueRegistrationCredential(s.cfg.Node, d, kind, s.cfg.Now())
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Store.SetCredential(ctx, d.String(), vc); err != nil {
		return nil, err
	}
	doc, err := s.document(d, FormatMultikey)
	if err != nil {
		return nil, err
	}
	return &Issued{DID: d.String(), Kind: kind, Document: doc, Credential: vc}, nil
}

// Resolve resolves did to its document in the given format. A deactivated DID returns its
// resolution together with ErrDeactivated.
func (s *Service) Resolve(ctx context.Context, did string, format DocFormat) (*Resolution, error) {
	d, err := ParseDID(did)
	if err != nil {
		return nil, err
	}
	doc, err := s.document(d, format)
	if err != nil {
		return nil, err
	}
	res := &Resolution{Document: doc}
	rec, err := s.cfg.Store.Record(ctx, d.String())
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, err
	default:
		res.Metadata.Registration = rec.Kind
		res.Metadata.Created = &rec.Created
	}
	st, err := s.cfg.Verifier.KeyStatus(ctx, d.String())
	if err != nil {
		return nil, err
	}
	if st.Closed() {
		res.Metadata.Deactivated, res.Metadata.Successor = true, st.Successor
		return res, fmt.Errorf("%w: %s", ErrDeactivated, st.describe(d.String()))
	}
	return res, nil
}

func (s *Service) document(d DID, format DocFormat) (*Document, error) {
	key := docKey{d.String(), format}
	s.mu.RLock()
	doc, ok := s.docs[key]
	s.mu.RUnlock()
	if ok {
		return doc, nil
	}
	doc, err := d.Document(format)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.docs) >= s.cfg.DocCacheSize {
		for k := range s.docs {
			delete(s.docs, k)
			break
		}
	}
	s.docs[key] = doc
	s.mu.Unlock()
	return doc, nil
}

// VerifyEnvelope checks an envelope and spends its nonce (see Verifier.Verify): for
// requests that act.
func (s *Service) VerifyEnvelope(ctx context.Context, raw []byte) (*Verified, error) {
	return s.cfg.Verifier.Verify(ctx, raw)
}

// CheckEnvelope checks an envelope without spending its nonce (see Verifier.Check): for a
// route that only reports, so checking costs the replay cache nothing.
func (s *Service) CheckEnvelope(ctx context.Context, raw []byte) (*Verified, error) {
	return s.cfg.Verifier.Check(ctx, raw)
}

// CheckArchived checks an envelope that another node accepted earlier (see
// Verifier.CheckArchived): for anti-entropy.
func (s *Service) CheckArchived(ctx context.Context, raw []byte) (*Verified, error) {
	return s.cfg.Verifier.CheckArchived(ctx, raw)
}

// ErrWrongRegistry reports a binding made for another chain or stake registry.
var ErrWrongRegistry = errors.New("identity: binding is for another chain or registry")

// CheckBinding verifies a wallet binding (both signatures, that it names this node's chain
// and registry, and that the chain has not closed the DID). Only the chain makes it count:
// the caller records it with StakeRegistry.bind, and the chain's index (package stake) is
// what every node reads. It returns ErrBadProof, ErrWrongRegistry or a DID error.
func (s *Service) CheckBinding(ctx context.Context, raw []byte) (*Binding, error) {
	b, err := VerifyBinding(raw, s.cfg.ChainID, s.cfg.Registry)
	if err != nil {
		return nil, err
	}
	if err := s.cfg.Verifier.CheckKeys(ctx, b.Statement.DID); err != nil {
		return nil, err
	}
	return b, nil
}

// VerifyBinding is the offline part of CheckBinding: the binding in raw verifies
// (ParseBinding) and names chainID and registry. It returns ErrBadProof, ErrWrongRegistry or
// a DID error; whether the chain closed the DID is the caller's to ask.
func VerifyBinding(raw []byte, chainID uint64, registry common.Address) (*Binding, error) {
	b, err := ParseBinding(raw)
	if err != nil {
		return nil, err
	}
	if b.Statement.ChainID != chainID || b.Statement.Registry != registry {
		return nil, fmt.Errorf("%w: it names chain %d registry %s; this node is on chain %d with registry %s",
			ErrWrongRegistry, b.Statement.ChainID, b.Statement.Registry.Hex(), chainID, registry.Hex())
	}
	return b, nil
}

// SignAsNode signs payload with the node's own DID key, as a document of type typ.
func (s *Service) SignAsNode(payload []byte, typ string) (string, error) {
	return s.cfg.Node.SignDocument(payload, typ)
}
