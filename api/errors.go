package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// Sentinel errors that handlers return; the mapper below gives each its status.
var (
	// ErrChainUnavailable reports that the chain did not answer a read.
	ErrChainUnavailable = errors.New("api: chain unavailable")
	// ErrUnhealthy reports a failed health check.
	ErrUnhealthy = errors.New("api: node unhealthy")
	// ErrBadRequest reports a request body or parameter that cannot be used.
	ErrBadRequest = errors.New("api: bad request")
	// ErrTooLarge reports a request body over the limit.
	ErrTooLarge = errors.New("api: request too large")
	// ErrTooManyRequests: the client's address made more writes than the node takes from one.
	ErrTooManyRequests = errors.New("api: too many requests from this address")

	// errRepresentationNotSupported: the DID resolver has no representation the request's
	// Accept takes.
	errRepresentationNotSupported = errors.New("api: DID representation not supported")
	// errInvalidOptions: a DID resolution option has a value the resolver cannot use.
	errInvalidOptions = errors.New("api: invalid DID resolution options")
	// errFeatureNotSupported: a DID resolution option the resolver does not support.
	errFeatureNotSupported = errors.New("api: DID resolution feature not supported")
	// ErrTooManyInFlight: the client's address, or the wallet a relayed transaction is from,
	// already has as many writes in flight as the node holds for one (maxInFlightPerAddress,
	// maxInFlightPerWallet); nothing was sent.
	ErrTooManyInFlight = errors.New("api: too many writes in flight from this address or wallet")
	// ErrMCPBusy: the node serves as many /mcp requests at once as it takes
	// (maxMCPRequests); nothing of this one ran.
	ErrMCPBusy = errors.New("api: too many MCP requests at once")
	// ErrNotA2A: the agent's registered card is a Surety JWS card, so it has no A2A form
	// signed by the agent (GET /v1/agents/{did}/agent-card.json?form=registered).
	ErrNotA2A = errors.New("api: the agent registered no A2A card")
	// ErrOriginNotAllowed: a browser's preflight from an origin the node does not list in
	// Config.CORSOrigins (surety node --cors-origin).
	ErrOriginNotAllowed = errors.New("api: this origin may not call the API from a browser")
)

// detailed is an error whose text the API wrote itself for the client (what field is wrong,
// and how): safe to show as the problem's detail.
type detailed struct {
	err    error
	detail string
}

func (d *detailed) Error() string { return d.err.Error() + ": " + d.detail }
func (d *detailed) Unwrap() error { return d.err }

// withDetail wraps sentinel with a client-facing explanation.
func withDetail(sentinel error, format string, args ...any) error {
	return &detailed{err: sentinel, detail: fmt.Sprintf(format, args...)}
}

// Problem is an RFC 9457 problem details document.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Instance is the request path the problem occurred on.
	Instance string `json:"instance,omitempty"`
	// Reason names why an envelope was refused (bad-signature, expired, replayed, ...).
	Reason string `json:"reason,omitempty"`
}

// problemType is the base of the type URIs of Surety's problems.
const problemType = "https://surety.dev/problems/"

// mapping gives the status and the constant, safe title of an error class. A mapping with
// a reason is an envelope refusal: the reason names it in the problem. retryAfter, when
// set, is sent as Retry-After: the refusal is the node's load, and passes.
type mapping struct {
	err        error
	status     int
	slug       string
	title      string
	reason     string
	retryAfter time.Duration
}

// mappings is checked in order with errors.Is; the first match wins.
var mappings = []mapping{
	{err: ErrChainUnavailable, status: http.StatusServiceUnavailable, slug: "chain-unavailable", title: "The chain did not answer; try again shortly"},
	{err: ErrUnhealthy, status: http.StatusServiceUnavailable, slug: "unhealthy", title: "The node is not healthy"},
	{err: ErrBadRequest, status: http.StatusBadRequest, slug: "bad-request", title: "The request is not valid"},
	{err: ErrTooLarge, status: http.StatusRequestEntityTooLarge, slug: "too-large", title: "The request body is too large"},
	{err: ErrTooManyRequests, status: http.StatusTooManyRequests, slug: "too-many-requests", title: "Too many requests from this address; slow down", retryAfter: rateRetryAfter},
	{err: ErrTooManyInFlight, status: http.StatusTooManyRequests, slug: "too-many-in-flight", title: "Too many writes in flight from this address or for this wallet; retry once one has ended", retryAfter: inFlightRetryAfter},
	{err: ErrMCPBusy, status: http.StatusServiceUnavailable, slug: "mcp-busy", title: "The node serves as many MCP requests as it takes at once; try again shortly", retryAfter: rateRetryAfter},
	{err: ErrOriginNotAllowed, status: http.StatusForbidden, slug: "cors-origin", title: "This node does not answer browsers from this origin (its operator lists them: --cors-origin)"},
	{err: context.DeadlineExceeded, status: http.StatusGatewayTimeout, slug: "timeout", title: "The request took too long"},

	// identity
	{err: identity.ErrInvalidDID, status: http.StatusBadRequest, slug: "invalid-did", title: "Not a valid DID"},
	{err: identity.ErrUnsupportedMethod, status: http.StatusNotImplemented, slug: "unsupported-did-method", title: "This DID method is not supported (use did:key or did:pkh)"},
	{err: identity.ErrUnsupportedKey, status: http.StatusNotImplemented, slug: "unsupported-key-type", title: "This key type is not supported (use Ed25519 or secp256k1)"},
	{err: identity.ErrNotFound, status: http.StatusNotFound, slug: "not-found", title: "Not found"},
	{err: identity.ErrDeactivated, status: http.StatusGone, slug: "deactivated", title: "The DID was deactivated by its controller"},
	{err: identity.ErrBadChallenge, status: http.StatusBadRequest, slug: "bad-challenge", title: "The challenge is unknown, used or expired; get a fresh one"},
	{err: identity.ErrBadProof, status: http.StatusBadRequest, slug: "bad-proof", title: "The proof of possession is not valid"},
	{err: identity.ErrAlreadyRegistered, status: http.StatusConflict, slug: "already-registered", title: "The DID is already registered with this node"},

	// envelope refusals
	{err: identity.ErrMalformed, status: http.StatusBadRequest, slug: "envelope-malformed", title: "Envelope refused: malformed", reason: "malformed"},
	{err: identity.ErrUnsupportedAlg, status: http.StatusBadRequest, slug: "envelope-unsupported-alg", title: "Envelope refused: unsupported algorithm (use EdDSA or ES256K)", reason: "unsupported-alg"},
	{err: identity.ErrBadSignature, status: http.StatusUnauthorized, slug: "envelope-bad-signature", title: "Envelope refused: bad signature", reason: "bad-signature"},
	{err: identity.ErrKidNotSender, status: http.StatusUnauthorized, slug: "envelope-kid-not-sender", title: "Envelope refused: the kid is not the sender's key", reason: "kid-not-sender"},
	{err: identity.ErrExpired, status: http.StatusUnprocessableEntity, slug: "envelope-expired", title: "Envelope refused: expired", reason: "expired"},
	{err: identity.ErrNotYetValid, status: http.StatusUnprocessableEntity, slug: "envelope-not-yet-valid", title: "Envelope refused: issued in the future", reason: "not-yet-valid"},
	{err: identity.ErrTooLong, status: http.StatusUnprocessableEntity, slug: "envelope-lifetime", title: "Envelope refused: exp is too far after iat", reason: "lifetime-too-long"},
	{err: identity.ErrIssuedBeforeStart, status: http.StatusUnprocessableEntity, slug: "envelope-before-start", title: "Envelope refused: issued before this node started; send a fresh one", reason: "issued-before-start"},
	{err: identity.ErrReplayed, status: http.StatusConflict, slug: "envelope-replayed", title: "Envelope refused: replayed", reason: "replayed"},
	{err: identity.ErrRevoked, status: http.StatusForbidden, slug: "envelope-revoked", title: "Envelope refused: the signer's DID was revoked on chain", reason: "revoked"},
	{err: identity.ErrRotated, status: http.StatusForbidden, slug: "envelope-rotated", title: "Envelope refused: the signer's DID was rotated away on chain; its successor signs now", reason: "rotated"},
	{err: identity.ErrWrongAudience, status: http.StatusForbidden, slug: "envelope-wrong-audience", title: "Envelope refused: its aud names another node (or none); sign it for this node's DID", reason: "wrong-audience"},
	{err: identity.ErrWrongChain, status: http.StatusForbidden, slug: "envelope-wrong-chain", title: "Envelope refused: its chain_id names another chain (or none)", reason: "wrong-chain"},
	{err: identity.ErrReplayCacheFull, status: http.StatusServiceUnavailable, slug: "replay-cache-full", title: "The node cannot take more envelopes right now; try again shortly"},
	{err: identity.ErrReplayBudget, status: http.StatusTooManyRequests, slug: "replay-budget", title: "This sender has too many live envelopes at the node; try again once some expire"},
	{err: identity.ErrIngressBudget, status: http.StatusTooManyRequests, slug: "ingress-budget", title: "Too many envelopes from this address; slow down", retryAfter: rateRetryAfter},
	// credential refusals (VC 2.0, POST /v1/credentials/verify)
	{err: identity.ErrCredentialMalformed, status: http.StatusBadRequest, slug: "credential-malformed", title: "Credential refused: not a VC 2.0 vc+jwt this node reads (typ vc+jwt, alg EdDSA, an Ed25519 did:key issuer)", reason: "malformed"},
	{err: identity.ErrCredentialBadSignature, status: http.StatusUnauthorized, slug: "credential-bad-signature", title: "Credential refused: the signature does not verify with the issuer's key", reason: "bad-signature"},
	{err: identity.ErrCredentialWrongIssuer, status: http.StatusForbidden, slug: "credential-wrong-issuer", title: "Credential refused: another DID than this node's issued it", reason: "wrong-issuer"},
	{err: identity.ErrCredentialExpired, status: http.StatusUnprocessableEntity, slug: "credential-expired", title: "Credential refused: validUntil has passed; fetch a fresh one", reason: "expired"},
	{err: identity.ErrCredentialNotYetValid, status: http.StatusUnprocessableEntity, slug: "credential-not-yet-valid", title: "Credential refused: validFrom is still ahead", reason: "not-yet-valid"},
	{err: identity.ErrCredentialRevoked, status: http.StatusForbidden, slug: "credential-revoked", title: "Credential refused: its status list says revoked (the chain closed the DID)", reason: "revoked"},
	{err: identity.ErrCredentialStatus, status: http.StatusUnprocessableEntity, slug: "credential-status", title: "Credential refused: its status list cannot be read (not this node's list, or the index is out of range)", reason: "status"},
	{err: identity.ErrWrongRegistry, status: http.StatusBadRequest, slug: "wrong-registry", title: "The binding is for another chain or stake registry"},
	{err: groups.ErrBadGroup, status: http.StatusBadRequest, slug: "group-invalid", title: "Not a valid group request"},
	{err: groups.ErrUnknownGroup, status: http.StatusNotFound, slug: "unknown-group", title: "This node does not know the group"},
	{err: groups.ErrNotMember, status: http.StatusForbidden, slug: "group-not-member", title: "The sender is not a member of the group"},
	{err: groups.ErrNotCreator, status: http.StatusForbidden, slug: "group-not-creator", title: "Only the group's creator sets its members"},
	{err: groups.ErrReservedGroup, status: http.StatusForbidden, slug: "group-reserved", title: "This group id is reserved (bounty-N is for bounty N's poster and worker)"},
	{err: groups.ErrStaleMembers, status: http.StatusConflict, slug: "group-members-stale", title: "A newer membership is in force"},
	{err: groups.ErrDuplicateEnvelope, status: http.StatusConflict, slug: "group-duplicate", title: "The envelope is already in the thread"},
	{err: groups.ErrUnbound, status: http.StatusForbidden, slug: "group-unbound", title: "The sender's DID is not bound to a wallet on chain: only a bound DID creates a group, and an unbound one posts only where a bound creator named it a member"},
	{err: groups.ErrQuota, status: http.StatusForbidden, slug: "group-quota", title: "A group quota of this identity is reached (groups per creator, posts per sender and group, posts per creator)"},
	{err: groups.ErrTooLarge, status: http.StatusRequestEntityTooLarge, slug: "group-too-large", title: "The group envelope is too large (a post: 8 KiB; a membership: 32 KiB)"},

	// registry
	{err: registry.ErrOversize, status: http.StatusRequestEntityTooLarge, slug: "card-too-large", title: "The signed card is too large"},
	{err: registry.ErrForged, status: http.StatusBadRequest, slug: "card-forged", title: "The card's signature does not verify"},
	{err: registry.ErrWrongDID, status: http.StatusBadRequest, slug: "card-wrong-did", title: "The card is signed by another DID than the one it describes"},
	{err: registry.ErrMalformed, status: http.StatusBadRequest, slug: "card-malformed", title: "Not a valid signed Agent Card"},
	{err: registry.ErrStale, status: http.StatusConflict, slug: "card-stale", title: "The node has a newer card for this DID"},
	{err: registry.ErrRateLimited, status: http.StatusTooManyRequests, slug: "rate-limited", title: "Too many unstaked cards; stake, or try later"},
	{err: registry.ErrUnknownAgent, status: http.StatusNotFound, slug: "unknown-agent", title: "No card for this DID"},
	{err: registry.ErrBusy, status: http.StatusServiceUnavailable, slug: "search-busy", title: "The node runs as many searches as it takes at once; try again shortly", retryAfter: rateRetryAfter},
	{err: registry.ErrBadQuery, status: http.StatusBadRequest, slug: "bad-request", title: "The request is not valid"},
	{err: reputation.ErrBadAudit, status: http.StatusBadRequest, slug: "audit-invalid", title: "Not a valid audit"},
	{err: reputation.ErrUnknownSubject, status: http.StatusNotFound, slug: "audit-unknown-subject", title: "The audited agent is not known here"},
	{err: reputation.ErrSameWallet, status: http.StatusForbidden, slug: "audit-same-wallet", title: "Auditor and subject are bound to the same wallet"},
	{err: reputation.ErrNoStanding, status: http.StatusForbidden, slug: "audit-no-standing", title: "The auditor's word weighs nothing: stake with its DID, or audit a bounty you settled"},
	{err: reputation.ErrUnknownBounty, status: http.StatusNotFound, slug: "audit-unknown-bounty", title: "The audited bounty is not in this node's escrow index"},
	{err: reputation.ErrForeignBounty, status: http.StatusUnprocessableEntity, slug: "audit-foreign-bounty", title: "The audited bounty is on another chain or escrow"},
	{err: reputation.ErrLate, status: http.StatusConflict, slug: "audit-late", title: "The audit's epoch is already closed in the log"},
	{err: reputation.ErrNotScored, status: http.StatusNotFound, slug: "not-scored", title: "The node has no scores for that head (it scores each head once its anchor on chain is confirmed, and keeps the latest)"},
	{err: reputation.ErrNotLogged, status: http.StatusNotFound, slug: "not-logged", title: "No such leaf in the log (yet: epochs close an interval after they end)"},
	{err: ErrNoCheckpoint, status: http.StatusNotImplemented, slug: "no-checkpoint", title: "This node signs no checkpoints (its deployment has no RootAnchor)"},
	{err: reputation.ErrDuplicate, status: http.StatusConflict, slug: "audit-duplicate", title: "This audit is already recorded"},
	{err: registry.ErrRevoked, status: http.StatusGone, slug: "agent-revoked", title: "The agent's DID was revoked or rotated on chain"},
	{err: ErrNotA2A, status: http.StatusNotFound, slug: "card-not-a2a", title: "The agent registered a Surety JWS card, not an A2A card: its own signed form is the jws of GET /v1/agents/{did}"},

	// bounties
	{err: ErrWalletNotBound, status: http.StatusForbidden, slug: "wallet-not-bound", title: "The signer's DID is not bound to that wallet on chain (surety did bind first)"},
	{err: ErrUnknownOperation, status: http.StatusNotFound, slug: "unknown-operation", title: "No such operation"},
	{err: ErrInterrupted, status: http.StatusServiceUnavailable, slug: "interrupted", title: "The node restarted before this write ended; look up its transaction before sending it again"},
	{err: ErrWrongBounty, status: http.StatusBadRequest, slug: "wrong-bounty", title: "The envelope must name this bounty (body.bounty)"},
	{err: txn.ErrUnknownWallet, status: http.StatusNotFound, slug: "unknown-wallet", title: "The node holds no such wallet"},
	{err: escrow.ErrUnknownBounty, status: http.StatusNotFound, slug: "unknown-bounty", title: "No such bounty"},
	{err: erc8004.ErrNoAgent, status: http.StatusNotFound, slug: "unknown-erc8004-agent", title: "No such agent in the ERC-8004 identity registry (or not indexed yet)"},
	{err: erc8004.ErrNoBindings, status: http.StatusNotImplemented, slug: "no-erc8004-bindings", title: "This node cannot check which wallets control a DID"},
	{err: escrow.ErrAlreadyPosted, status: http.StatusConflict, slug: "already-posted", title: "This post was already made: the poster used this salt before (the detail names the bounty)"},
	{err: escrow.ErrBountyClosed, status: http.StatusConflict, slug: "bounty-closed", title: "The bounty is closed"},
	{err: escrow.ErrWrongStatus, status: http.StatusConflict, slug: "bounty-wrong-status", title: "The bounty's status does not allow this"},
	{err: escrow.ErrNotAllowed, status: http.StatusForbidden, slug: "bounty-not-allowed", title: "This wallet may not do that to this bounty"},
	{err: escrow.ErrTooLate, status: http.StatusConflict, slug: "bounty-too-late", title: "Too late for this bounty"},
	{err: escrow.ErrTooEarly, status: http.StatusConflict, slug: "bounty-too-early", title: "Too early for this bounty"},
	{err: escrow.ErrInvalid, status: http.StatusBadRequest, slug: "bounty-invalid", title: "The escrow refuses these arguments"},
	{err: escrow.ErrSpecMismatch, status: http.StatusUnprocessableEntity, slug: "spec-mismatch", title: "The spec does not match the bounty's specHash"},
	{err: escrow.ErrInsufficientStake, status: http.StatusForbidden, slug: "insufficient-stake", title: "The agent's stake is below what the bounty requires"},
	{err: escrow.ErrNothingToWithdraw, status: http.StatusConflict, slug: "nothing-to-withdraw", title: "Nothing to withdraw"},
	{err: escrow.ErrTransferFailed, status: http.StatusUnprocessableEntity, slug: "transfer-failed", title: "A token transfer failed"},
	{err: escrow.ErrAgentNotStaked, status: http.StatusConflict, slug: "not-staked", title: "The wallet holds no stake for this agent"},
	{err: escrow.ErrAgentClosed, status: http.StatusConflict, slug: "agent-closed", title: "The agent is revoked or rotated on chain; its stake can only be unbonded and withdrawn"},

	// jobs (ERC-8183)
	{err: jobs.ErrUnknownJob, status: http.StatusNotFound, slug: "unknown-job", title: "No such job (or not indexed yet on this node: the detail says which)"},
	{err: jobs.ErrWrongStatus, status: http.StatusConflict, slug: "job-wrong-status", title: "The job's status does not allow this"},
	{err: jobs.ErrNotAllowed, status: http.StatusForbidden, slug: "job-not-allowed", title: "This wallet may not do that to this job"},
	{err: jobs.ErrTooEarly, status: http.StatusConflict, slug: "job-too-early", title: "Too early for this job"},
	{err: jobs.ErrTooLate, status: http.StatusConflict, slug: "job-too-late", title: "Too late for this job"},
	{err: jobs.ErrBudgetMismatch, status: http.StatusConflict, slug: "job-budget-mismatch", title: "The job's budget changed since it was read; nothing was paid"},
	{err: jobs.ErrInvalid, status: http.StatusBadRequest, slug: "job-invalid", title: "The job contracts refuse these arguments"},
	{err: jobs.ErrInsufficientStake, status: http.StatusForbidden, slug: "job-insufficient-stake", title: "The worker's free stake is below what the job's plan locks"},
	{err: jobs.ErrTransferFailed, status: http.StatusUnprocessableEntity, slug: "transfer-failed", title: "A token transfer failed"},

	// stake
	{err: stake.ErrInvalid, status: http.StatusBadRequest, slug: "stake-invalid", title: "The stake registry refuses these arguments"},
	{err: stake.ErrNothingToWithdraw, status: http.StatusConflict, slug: "nothing-to-withdraw", title: "Nothing to withdraw"},
	{err: stake.ErrTransferFailed, status: http.StatusUnprocessableEntity, slug: "transfer-failed", title: "A token transfer failed"},
	{err: stake.ErrAgentClosed, status: http.StatusConflict, slug: "agent-closed", title: "The agent is revoked or rotated on chain; its stake can only be unbonded and withdrawn"},
	{err: stake.ErrNotStaked, status: http.StatusConflict, slug: "not-staked", title: "The wallet holds no stake for this agent"},
	{err: stake.ErrNotController, status: http.StatusForbidden, slug: "not-controller", title: "The wallet has not bound this agent on chain: only a wallet that bound it revokes or rotates it"},
	{err: stake.ErrStakeTooLow, status: http.StatusConflict, slug: "stake-too-low", title: "Less stake than asked for"},
	{err: stake.ErrStillBonded, status: http.StatusConflict, slug: "still-bonded", title: "The unbonding delay has not passed"},
	{err: stake.ErrStakeLocked, status: http.StatusConflict, slug: "stake-locked", title: "Claimed bounties lock this stake"},
	{err: stake.ErrAlreadyBound, status: http.StatusConflict, slug: "already-bound", title: "The wallet already bound this agent on chain"},
	{err: ErrBindingNotCounted, status: http.StatusUnprocessableEntity, slug: "binding-not-counted", title: "The binding was recorded on chain but its proof does not pass the nodes' rule"},

	// transactions (package txn): after the contracts' own refusals, which are more specific
	{err: txn.ErrRequestInProgress, status: http.StatusConflict, slug: "request-in-progress", title: "A request with this Idempotency-Key is in progress; retry shortly"},
	{err: txn.ErrKeyReused, status: http.StatusUnprocessableEntity, slug: "idempotency-key-reused", title: "This Idempotency-Key was used for a different request"},
	{err: txn.ErrCannotPay, status: http.StatusBadRequest, slug: "cannot-pay", title: "The wallet cannot pay for this transaction (value and gas)"},
	{err: txn.ErrNotRelayable, status: http.StatusBadRequest, slug: "not-relayable", title: "The node does not relay this transaction"},
	{err: txn.ErrNonceGap, status: http.StatusConflict, slug: "nonce-gap", title: "The transaction's nonce is above its wallet's next one; send the ones below it first"},
	{err: txn.ErrFeeTooHigh, status: http.StatusBadRequest, slug: "fee-out-of-bounds", title: "The fee to offer is out of bounds; name the fee to pay"},
	{err: txn.ErrReverted, status: http.StatusUnprocessableEntity, slug: "reverted", title: "The contract refused the transaction"},
	{err: txn.ErrChainRefused, status: http.StatusUnprocessableEntity, slug: "chain-refused", title: "The chain refused the transaction; nothing was sent or spent"},
	{err: txn.ErrChainUnreachable, status: http.StatusServiceUnavailable, slug: "chain-unreachable", title: "The chain did not answer; retry with the same Idempotency-Key, which waits for the transaction if it got through"},
}

// problemFor maps err to the problem returned to the client. Messages come from the table
// (or echo's own HTTP errors for routing and binding), never from err's text, so internal
// detail does not leak; the caller logs err itself.
func problemFor(err error) Problem {
	var he *echo.HTTPError
	if errors.As(err, &he) {
		p := Problem{Type: "about:blank", Status: he.Code, Title: http.StatusText(he.Code)}
		if msg, ok := he.Message.(string); ok && he.Code < 500 && msg != p.Title {
			p.Detail = msg
		}
		return p
	}
	if m, ok := mappingOf(err); ok {
		p := Problem{Type: problemType + m.slug, Title: m.title, Status: m.status, Reason: m.reason}
		// Escrow's bounty errors are written for people from chain data ("bounty 7 is
		// already accepted"): safe to pass on.
		var be *escrow.BountyError
		var je *jobs.JobError
		var se *stake.Error
		var te *txn.Error
		var ce *registry.CardError
		var qe *registry.QueryError
		var ae *reputation.AuditError
		var ge *groups.Error
		var d *detailed
		var vce *identity.CredentialError
		switch {
		case errors.As(err, &vce):
			p.Detail = vce.Detail
		case errors.As(err, &be) && be.Msg != "":
			p.Detail = be.Msg
		case errors.As(err, &je) && je.Msg != "":
			p.Detail = je.Msg // written for people from chain data ("job 7 does not exist")
		case errors.As(err, &se):
			p.Detail = se.Msg
		case errors.As(err, &te):
			p.Detail = te.Error()
		case errors.As(err, &ce):
			p.Detail = ce.Detail
		case errors.As(err, &qe):
			p.Detail = qe.Field + " " + qe.Detail
		case errors.As(err, &ae):
			p.Detail = ae.Detail
		case errors.As(err, &ge):
			p.Detail = ge.Detail
		case errors.As(err, &d):
			p.Detail = d.detail
		}
		return p
	}
	return Problem{Type: problemType + "internal", Title: "Internal error", Status: http.StatusInternalServerError}
}

// ProblemType is the problem type URI the API answers err with (problemFor's Type): what
// the conformance vectors in testdata/conformance name for a refusal.
func ProblemType(err error) string { return problemFor(err).Type }

// didErrorType is the base of W3C DID Resolution's error types.
const didErrorType = "https://www.w3.org/ns/did#"

// didErrors give the W3C DID Resolution error type of the resolver's errors, with the status
// the spec's HTTP binding gives it; checked in order with errors.Is.
var didErrors = []struct {
	err    error
	name   string
	status int
	title  string
}{
	{identity.ErrInvalidDID, "INVALID_DID", http.StatusBadRequest, "Not a valid DID"},
	{identity.ErrUnsupportedMethod, "METHOD_NOT_SUPPORTED", http.StatusNotImplemented, "This DID method is not supported (use did:key or did:pkh)"},
	// The method is supported, this key type of it is not.
	{identity.ErrUnsupportedKey, "FEATURE_NOT_SUPPORTED", http.StatusNotImplemented, "This key type is not supported (use Ed25519 or secp256k1)"},
	{errRepresentationNotSupported, "REPRESENTATION_NOT_SUPPORTED", http.StatusNotAcceptable, "No representation the request accepts"},
	{errFeatureNotSupported, "FEATURE_NOT_SUPPORTED", http.StatusNotImplemented, "A resolution option this node does not support"},
	{errInvalidOptions, "INVALID_OPTIONS", http.StatusBadRequest, "The resolution options are not valid"},
	{identity.ErrNotFound, "NOT_FOUND", http.StatusNotFound, "No DID document for this DID"},
}

// resolutionProblemFor maps an error of the DID resolver to the problem its resolution
// result carries: a W3C DID error type, or for anything else the problem problemFor makes
// (INTERNAL_ERROR for a 500).
func resolutionProblemFor(err error) Problem {
	for _, m := range didErrors {
		if !errors.Is(err, m.err) {
			continue
		}
		p := Problem{Type: didErrorType + m.name, Title: m.title, Status: m.status}
		var d *detailed
		var de *identity.DIDError
		switch {
		case errors.As(err, &d):
			p.Detail = d.detail
		case errors.As(err, &de):
			p.Detail = de.Reason // written for people, about the client's own DID
		}
		return p
	}
	p := problemFor(err)
	if p.Status == http.StatusInternalServerError {
		p.Type, p.Title = didErrorType+"INTERNAL_ERROR", "Internal error"
	}
	return p
}

// mappingOf is the first mapping err matches.
func mappingOf(err error) (mapping, bool) {
	for _, m := range mappings {
		if errors.Is(err, m.err) {
			return m, true
		}
	}
	return mapping{}, false
}

// errorHandler is echo's HTTPErrorHandler for the server: the single place errors become
// HTTP responses. Every error is a problem (application/problem+json), except those of the
// DID resolver, which the W3C binding answers as a resolution result with the problem in
// didResolutionMetadata.error (application/did-resolution).
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		var rf *resolutionFailure
		resolver := errors.As(err, &rf)
		var p Problem
		if resolver {
			p = resolutionProblemFor(rf.err)
		} else {
			p = problemFor(err)
		}
		p.Instance = c.Request().URL.Path
		// 501 is the client's doing (a DID method or key type the node does not support):
		// not the node's failure, so not an error in its log.
		if p.Status >= 500 && p.Status != http.StatusNotImplemented {
			log.Error("request failed", "method", c.Request().Method, "path", p.Instance, "status", p.Status, "err", err)
		}
		if m, ok := mappingOf(err); ok && m.retryAfter > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(m.retryAfter/time.Second)))
		}
		contentType := "application/problem+json"
		if resolver {
			contentType = contentResolution
		}
		c.Response().Header().Set(echo.HeaderContentType, contentType)
		switch {
		case c.Request().Method == http.MethodHead:
			_ = c.NoContent(p.Status)
		case resolver:
			_ = c.JSON(p.Status, resolutionResult{Context: resolutionContext, ResolutionMetadata: resolutionMetadata{Error: &p}})
		default:
			_ = c.JSON(p.Status, p)
		}
	}
}
