package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// Bounties is what the bounty routes need: the escrow service and its index. Errors follow
// escrow's and txn's contracts: *escrow.BountyError wrapping a sentinel, *txn.Error
// (txn.ErrUnknownWallet, txn.ErrChainRefused, ...), txn.ErrRequestInProgress, txn.ErrKeyReused.
type Bounties interface {
	Do(ctx context.Context, op escrow.Op, idem txn.Idempotency) (*escrow.Result, error)
	Retry(ctx context.Context, op escrow.Op, idem txn.Idempotency) (*escrow.Result, error)
	List(ctx context.Context, f escrow.Filter) ([]*escrow.Bounty, error)
	Get(ctx context.Context, id uint64) (*escrow.Bounty, error)
	History(ctx context.Context, id uint64) ([]escrow.Event, error)
	Subscribe(id uint64) (<-chan escrow.Event, func())
	// Relay sends an escrow call an external wallet signed; Escrow is the contract.
	Relay(ctx context.Context, raw []byte) (*escrow.Result, error)
	// Broadcast sends it without waiting for it to be mined (POST /v1/rpc).
	Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error)
	Escrow() common.Address
	// PutSpec stores a bounty's task text under the hash it must have (escrow.CheckSpec).
	PutSpec(ctx context.Context, hash common.Hash, text string) error
	// PutBountySpec stores the task text of an indexed bounty, checked against its specHash.
	PutBountySpec(ctx context.Context, id uint64, text string) error
}

// Staking is what the stake routes need: the stake service. Errors: *stake.Error wrapping a
// sentinel, and txn's as for Bounties.
type Staking interface {
	Do(ctx context.Context, op stake.Op, idem txn.Idempotency) (*stake.Result, error)
	Retry(ctx context.Context, op stake.Op, idem txn.Idempotency) (*stake.Result, error)
	// StakeOf reads an agent's stake under a controller wallet from the chain.
	StakeOf(ctx context.Context, agent common.Hash, wallet common.Address) (*stake.Holding, error)
	// Relay sends a StakeRegistry call an external wallet signed; Registry is the contract.
	Relay(ctx context.Context, raw []byte) (*stake.Result, error)
	// Broadcast sends it without waiting for it to be mined (POST /v1/rpc).
	Broadcast(ctx context.Context, raw []byte) (*types.Transaction, error)
	Registry() common.Address
}

// Senders are the wallets the node sends from (package txn).
type Senders interface {
	HasWallet(addr common.Address) bool
	// SignTypedData signs EIP-712 data as a wallet the node holds (txn.ErrUnknownWallet
	// otherwise): the wallet's half of a rotation's successor binding.
	SignTypedData(ctx context.Context, addr common.Address, data apitypes.TypedData) ([]byte, error)
}

// Wallets checks wallet bindings before the node records them on chain.
type Wallets interface {
	// CheckBinding verifies a wallet binding (both signatures, this node's chain and registry,
	// a DID the chain has not closed); it records nothing: the chain does.
	CheckBinding(ctx context.Context, raw []byte) (*identity.Binding, error)
}

// StakeIndex is the node's index of StakeRegistry (package stake): the chain's word on which
// wallets control a DID.
type StakeIndex interface {
	// Bound reports whether wallet controls did on chain with a binding whose proof verifies.
	Bound(ctx context.Context, did string, wallet common.Address) (bool, error)
	// WaitIndexed returns once block's events are in the index.
	WaitIndexed(ctx context.Context, block uint64) error
	// CatchUp returns once the index holds every block confirmed now.
	CatchUp(ctx context.Context) error
	// KeyState reads a DID's key status: active, or revoked or rotated (and to what).
	KeyState(ctx context.Context, did string) (stake.KeyState, error)
}

var (
	_ Bounties   = (*escrow.Service)(nil)
	_ Staking    = (*stake.Service)(nil)
	_ Senders    = (*txn.Service)(nil)
	_ Wallets    = (*identity.Service)(nil)
	_ StakeIndex = (*stake.Index)(nil)
)

// ErrBindingNotCounted reports a bind the chain recorded that the index does not count once
// it holds the bind's block: its proof (the one recorded, which may not be the one posted)
// fails the nodes' rule, or a controller closed the DID meanwhile. An index that has not read
// the block yet is caught up first, never reported with this.
var ErrBindingNotCounted = errors.New("api: the binding recorded on chain does not count")

// ErrWalletNotBound reports a request whose signer is not bound to the wallet it names.
var ErrWalletNotBound = errors.New("api: the wallet is not bound to the signer's DID")

// ErrWrongBounty reports an envelope that names another bounty than the URL.
var ErrWrongBounty = errors.New("api: the envelope names another bounty")

// postSalt is the salt of a post whose body names none: a hash of the sender and the
// envelope's id, the same at every node for the same envelope.
func postSalt(e identity.Envelope) common.Hash {
	return crypto.Keccak256Hash([]byte("surety-post\x00" + e.Sender + "\x00" + e.ID))
}

// signedRequest is a verified request envelope.
type signedRequest struct {
	sender   string
	envelope identity.Envelope
	replayed error // set when the envelope was seen before: only a stored answer may be given
}

// authenticate verifies the request body as an envelope. An envelope whose only fault is
// freshness (replayed, or sent before a node restart) passes only with an Idempotency-Key, and
// then only to fetch the answer of the request it started.
func (s *Server) authenticate(c echo.Context) (*signedRequest, error) {
	body, err := readBody(c)
	if err != nil {
		return nil, err
	}
	v, err := s.cfg.Identity.VerifyEnvelope(c.Request().Context(), body)
	var ve *identity.VerifyError
	if errors.As(err, &ve) && ve.Authentic != nil && c.Request().Header.Get("Idempotency-Key") != "" {
		if err := ve.Authentic.Envelope.CheckAudience(s.cfg.Identity.NodeDID(), s.cfg.Chain.ID); err != nil {
			return nil, err
		}
		return &signedRequest{sender: ve.Authentic.Envelope.Sender, envelope: ve.Authentic.Envelope, replayed: err}, nil
	}
	if err != nil {
		return nil, err
	}
	// A request that changes state acts at this node, on this chain, once.
	if err := v.Envelope.CheckAudience(s.cfg.Identity.NodeDID(), s.cfg.Chain.ID); err != nil {
		return nil, err
	}
	return &signedRequest{sender: v.Envelope.Sender, envelope: v.Envelope}, nil
}

func decodeBody(e identity.Envelope, v any) error {
	if len(e.Body) == 0 {
		return withDetail(ErrBadRequest, "the envelope has no body")
	}
	if err := json.Unmarshal(e.Body, v); err != nil {
		return withDetail(ErrBadRequest, "envelope body: %v", err)
	}
	return nil
}

// authorizeWallet checks that the node holds the wallet and that the signer may use it.
func (s *Server) authorizeWallet(ctx context.Context, did string, wallet common.Address) error {
	if wallet == (common.Address{}) {
		return withDetail(ErrBadRequest, "body.wallet is required")
	}
	if !s.cfg.Senders.HasWallet(wallet) {
		return withDetail(txn.ErrUnknownWallet, "%s", wallet.Hex())
	}
	ok, err := s.cfg.Stakes.Bound(ctx, did, wallet)
	if err == nil && !ok {
		// The bind may be a block old: look again once this node's index holds every
		// confirmed block, so a DID bound through another node acts here with no extra step.
		wctx, cancel := context.WithTimeout(ctx, escrow.CatchUpWait)
		if s.cfg.Stakes.CatchUp(wctx) == nil {
			ok, err = s.cfg.Stakes.Bound(ctx, did, wallet)
		}
		cancel()
	}
	if err != nil {
		return err
	}
	if !ok {
		return ErrWalletNotBound
	}
	return nil
}

func fingerprint(parts ...any) string {
	b, _ := json.Marshal(parts)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// once runs a request's transaction once per Idempotency-Key: do sends it (or answers from
// the store), retry answers a replayed envelope from the store only (with 200: the request
// was made before). then, when set, runs after either succeeded and before the answer is
// written: a retry, or a write the node carries on after a restart, waits as the first did.
func once[T any](s *Server, c echo.Context, req *signedRequest, fp string, status int,
	do, retry func(context.Context, txn.Idempotency) (T, error), then func(context.Context, T)) error {
	key := c.Request().Header.Get("Idempotency-Key")
	if len(key) > maxIdempotencyKey {
		return withDetail(ErrBadRequest, "Idempotency-Key is longer than %d characters", maxIdempotencyKey)
	}
	idem := txn.Idempotency{Caller: req.sender, Key: key, Fingerprint: fp}
	if req.replayed != nil {
		// The very same envelope again: only a retry of a stored request may be answered.
		res, err := retry(c.Request().Context(), idem)
		if errors.Is(err, txn.ErrNoSuchRequest) {
			return req.replayed
		}
		if err != nil {
			return err
		}
		if then != nil {
			then(c.Request().Context(), res)
		}
		return c.JSON(http.StatusOK, res)
	}
	res, err := do(c.Request().Context(), idem)
	if err != nil {
		return err
	}
	if then != nil {
		then(c.Request().Context(), res)
	}
	return c.JSON(status, res)
}

// do runs a bounty op for the request, once per Idempotency-Key.
func (s *Server) do(c echo.Context, req *signedRequest, op escrow.Op, fp string) error {
	status := http.StatusOK
	if op.Kind == escrow.OpPost {
		status = http.StatusCreated
	}
	return once(s, c, req, fp, status,
		func(ctx context.Context, idem txn.Idempotency) (*escrow.Result, error) {
			return s.cfg.Bounties.Do(ctx, op, idem)
		},
		func(ctx context.Context, idem txn.Idempotency) (*escrow.Result, error) {
			return s.cfg.Bounties.Retry(ctx, op, idem)
		}, nil)
}

func parseAmount(s, what string) (*big.Int, error) {
	if s == "" {
		return new(big.Int), nil
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || v.Sign() < 0 {
		return nil, withDetail(ErrBadRequest, "%s %q is not a non-negative decimal integer", what, s)
	}
	return v, nil
}

func (s *Server) postBounty(c echo.Context) error {
	req, err := s.authenticate(c)
	if err != nil {
		return err
	}
	var b PostBody
	if err := decodeBody(req.envelope, &b); err != nil {
		return err
	}
	amount, err := parseAmount(b.Amount, "amount")
	if err != nil {
		return err
	}
	minStake, err := parseAmount(b.MinStake, "minStake")
	if err != nil {
		return err
	}
	if err := s.authorizeWallet(c.Request().Context(), req.sender, b.Wallet); err != nil {
		return err
	}
	if b.Spec != "" {
		if b.SpecHash == (common.Hash{}) {
			b.SpecHash = escrow.SpecHash(b.Spec)
		}
		// Stored before the post, so the bounty is readable the moment it is indexed; a
		// post that then fails leaves a text nothing points at, from an authenticated sender.
		if err := s.cfg.Bounties.PutSpec(c.Request().Context(), b.SpecHash, b.Spec); err != nil {
			return err
		}
	}
	salt := b.Salt
	if salt == (common.Hash{}) {
		salt = postSalt(req.envelope)
	}
	op := escrow.Op{Kind: escrow.OpPost, From: b.Wallet, Post: escrow.PostRequest{
		Token: b.Token, Amount: amount, Arbiter: b.Arbiter, Deadline: b.Deadline, ReviewWindow: b.ReviewWindow, MinStake: minStake, SpecHash: b.SpecHash, Salt: salt,
	}}
	return s.do(c, req, op, fingerprint("post", b))
}

var actions = map[string]escrow.Action{
	"claim": escrow.ActionClaim, "assign": escrow.ActionAssign, "submit": escrow.ActionSubmit, "accept": escrow.ActionAccept,
	"reject": escrow.ActionReject, "dispute": escrow.ActionDispute, "resolve": escrow.ActionResolve,
	"resolve-expired": escrow.ActionResolveExpired, "release": escrow.ActionRelease, "refund": escrow.ActionRefund, "cancel": escrow.ActionCancel,
	"unclaim": escrow.ActionUnclaim,
}

func bountyID(c echo.Context) (uint64, error) {
	id, err := strconv.ParseUint(c.Param("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, withDetail(ErrBadRequest, "bounty id %q must be a positive integer", c.Param("id"))
	}
	return id, nil
}

func (s *Server) bountyAction(c echo.Context) error {
	id, err := bountyID(c)
	if err != nil {
		return err
	}
	action, ok := actions[c.Param("action")]
	if !ok {
		return echo.NewHTTPError(http.StatusNotFound, "unknown action "+strconv.Quote(c.Param("action")))
	}
	req, err := s.authenticate(c)
	if err != nil {
		return err
	}
	// The signature must commit to this bounty, so it cannot be used on another.
	if ref := req.envelope.Bounty; ref == nil || ref.ID != id || !strings.EqualFold(ref.Escrow, s.escrowAddress()) || ref.ChainID != s.cfg.Chain.ID {
		return withDetail(ErrWrongBounty, "body.bounty must be {chain_id: %d, escrow: %s, id: %d}", s.cfg.Chain.ID, s.escrowAddress(), id)
	}
	var b ActionBody
	if err := decodeBody(req.envelope, &b); err != nil {
		return err
	}
	slash, err := parseAmount(b.Slash, "slash")
	if err != nil {
		return err
	}
	if err := s.authorizeWallet(c.Request().Context(), req.sender, b.Wallet); err != nil {
		return err
	}
	op := escrow.Op{Kind: escrow.OpAct, From: b.Wallet, BountyID: id, Action: action, Args: escrow.ActionArgs{
		AgentID: b.AgentID, Worker: b.Worker, ResultHash: b.ResultHash, ReasonHash: b.ReasonHash, WorkerBps: b.WorkerBps, Slash: slash,
	}}
	return s.do(c, req, op, fingerprint(string(action), id, b))
}

func (s *Server) withdraw(c echo.Context) error {
	req, err := s.authenticate(c)
	if err != nil {
		return err
	}
	var b WithdrawBody
	if err := decodeBody(req.envelope, &b); err != nil {
		return err
	}
	if err := s.authorizeWallet(c.Request().Context(), req.sender, b.Wallet); err != nil {
		return err
	}
	return s.do(c, req, escrow.Op{Kind: escrow.OpWithdraw, From: b.Wallet, Token: b.Token}, fingerprint("withdraw", b))
}

func (s *Server) escrowAddress() string {
	for _, k := range s.cfg.Chain.Contracts {
		if k.Name == "BountyEscrow" {
			return k.Address.Hex()
		}
	}
	return ""
}

func (s *Server) listBounties(c echo.Context) error {
	var f escrow.Filter
	q := c.QueryParams()
	if st := q.Get("status"); st != "" {
		f.Status = escrow.Status(st)
		switch f.Status {
		case escrow.StatusOpen, escrow.StatusAssigned, escrow.StatusSubmitted, escrow.StatusDisputed, escrow.StatusAccepted,
			escrow.StatusReleased, escrow.StatusResolved, escrow.StatusRefunded, escrow.StatusCancelled:
		default:
			return withDetail(ErrBadRequest, "unknown status %q", st)
		}
	}
	f.Text = q.Get("q")
	if len(f.Text) > 200 {
		return withDetail(ErrBadRequest, "q is at most 200 bytes")
	}
	for name, dst := range map[string]*common.Address{"poster": &f.Poster, "worker": &f.Worker} {
		if v := q.Get(name); v != "" {
			if !common.IsHexAddress(v) {
				return withDetail(ErrBadRequest, "%s %q is not an address", name, v)
			}
			*dst = common.HexToAddress(v)
		}
	}
	for name, dst := range map[string]*int{"limit": &f.Limit} {
		if v := q.Get(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return withDetail(ErrBadRequest, "%s must be a non-negative integer", name)
			}
			*dst = n
		}
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return withDetail(ErrBadRequest, "after must be a bounty id")
		}
		f.After = n
	}
	list, err := s.cfg.Bounties.List(c.Request().Context(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"bounties": list})
}

// putBountySpec stores a bounty's task text, sent as the request body, when it hashes to the
// bounty's specHash: the hash is the authentication, so anyone (a poster publishing its spec
// to more nodes, a worker who holds it) may send it, and a node stores one text per bounty.
func (s *Server) putBountySpec(c echo.Context) error {
	id, err := bountyID(c)
	if err != nil {
		return err
	}
	text, err := io.ReadAll(io.LimitReader(c.Request().Body, maxSpecBody+1))
	if err != nil {
		return bodyError(err)
	}
	if len(text) > maxSpecBody {
		return withDetail(ErrTooLarge, "a spec is at most %d bytes", maxSpecBody)
	}
	if err := s.cfg.Bounties.PutBountySpec(c.Request().Context(), id, string(text)); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) getBounty(c echo.Context) error {
	id, err := bountyID(c)
	if err != nil {
		return err
	}
	b, err := s.cfg.Bounties.Get(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}

// bountyEvents streams a bounty's history, then its new events as they are indexed, as
// server-sent events, until the client goes away.
func (s *Server) bountyEvents(c echo.Context) error {
	id, err := bountyID(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	if _, err := s.cfg.Bounties.Get(ctx, id); err != nil {
		return err
	}
	live, stop := s.cfg.Bounties.Subscribe(id)
	defer stop()
	history, err := s.cfg.Bounties.History(ctx, id)
	if err != nil {
		return err
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	seen := map[string]bool{}
	send := func(e escrow.Event) error {
		k := fmt.Sprintf("%s/%d", e.TxHash, e.LogIndex)
		if seen[k] {
			return nil
		}
		seen[k] = true
		b, _ := json.Marshal(e)
		if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", k, e.Name, b); err != nil {
			return err
		}
		w.Flush()
		return nil
	}
	for _, e := range history {
		if err := send(e); err != nil {
			return nil
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case e := <-live:
			if err := send(e); err != nil {
				return nil
			}
		}
	}
}

// BindingRequest is the body of POST /v1/bindings: a wallet binding signed by the agent key
// and the wallet (see identity.Binding).
type BindingRequest = identity.Binding

// addBinding records a wallet binding on chain, where every node reads it from: 200 when the
// chain already has it (through whichever node it was sent), 201 when the node sent the bind
// from a wallet it holds and indexed it, 202 with the call to send when the wallet is the
// user's own.
func (s *Server) addBinding(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	b, err := s.cfg.Wallets.CheckBinding(ctx, body)
	if err != nil {
		return err
	}
	st := b.Statement
	ans := BindingAnswer{Statement: wire.BindingStatement(st)}
	if ans.OnChain, err = s.boundOnChain(ctx, st); err != nil {
		return err
	}
	if ans.OnChain {
		return c.JSON(http.StatusOK, ans)
	}
	proof, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if !s.cfg.Senders.HasWallet(st.Wallet) {
		to := st.Registry
		ans.To, ans.Data = &to, contracts.NewStakeRegistry().PackBind(identity.AgentID(st.DID), proof)
		return c.JSON(http.StatusAccepted, ans)
	}
	res, err := s.cfg.Staking.Do(ctx, stake.Op{Kind: stake.OpBind, From: st.Wallet, Agent: identity.AgentID(st.DID), Proof: proof},
		txn.Idempotency{Caller: st.DID, Key: c.Request().Header.Get("Idempotency-Key"), Fingerprint: fingerprint("bind", st)})
	if errors.Is(err, stake.ErrAlreadyBound) {
		// Bound since the look above, through another node: the chain has it.
		ok, berr := s.boundOnChain(ctx, st)
		if berr != nil {
			return berr
		}
		if !ok {
			return err // read at another block than the registry's refusal: its word stands
		}
		ans.OnChain = true
		return c.JSON(http.StatusOK, ans)
	}
	if err != nil {
		return err
	}
	ans.TxHash, ans.Block = res.TxHash, res.Block
	if err := s.cfg.Stakes.WaitIndexed(ctx, res.Block); err != nil {
		return err
	}
	if ans.OnChain, err = s.cfg.Stakes.Bound(ctx, st.DID, st.Wallet); err != nil {
		return err
	}
	if !ans.OnChain {
		return withDetail(ErrBindingNotCounted, "%s is bound to %s on chain (block %d), but the index does not count the binding", st.DID, st.Wallet.Hex(), res.Block)
	}
	return c.JSON(http.StatusCreated, ans)
}

// boundOnChain reports whether the chain binds st's DID to st's wallet with a proof the
// nodes' rule counts. The index answers, once it holds the chain's word: when the chain has
// a record the index has not read yet (a bind sent through another node a moment ago), the
// index first reads up to the chain's head, so the answer is the same at every node. A record
// the index then does not count (its proof fails the rule) is ErrBindingNotCounted, and one
// the wallet closed is stake.ErrAgentClosed: binding again cannot help either.
func (s *Server) boundOnChain(ctx context.Context, st identity.BindingStatement) (bool, error) {
	ok, err := s.cfg.Stakes.Bound(ctx, st.DID, st.Wallet)
	if err != nil || ok {
		return ok, err
	}
	agent := identity.AgentID(st.DID)
	h, err := s.cfg.Staking.StakeOf(ctx, agent, st.Wallet)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrChainUnavailable, err)
	}
	switch h.Status {
	case stake.StatusNone:
		return false, nil
	case stake.StatusBound:
	default:
		return false, &stake.Error{Agent: agent, Err: stake.ErrAgentClosed, Msg: fmt.Sprintf("%s is %s under wallet %s on chain: it cannot be bound to it again", st.DID, h.Status, st.Wallet.Hex())}
	}
	// The head is read after the record: once the index holds the head, it holds the bind.
	head, err := s.cfg.Blocks.BlockNumber(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: %w", ErrChainUnavailable, err)
	}
	if err := s.cfg.Stakes.WaitIndexed(ctx, head); err != nil {
		return false, err
	}
	if ok, err = s.cfg.Stakes.Bound(ctx, st.DID, st.Wallet); err != nil || ok {
		return ok, err
	}
	return false, withDetail(ErrBindingNotCounted, "%s is bound to %s on chain, but the index does not count it: the proof recorded with it fails the nodes' rule, or a controller closed the DID", st.DID, st.Wallet.Hex())
}

// relay sends a transaction an external wallet signed. The signature is the authentication:
// the wallet is msg.sender; the node only checks it calls the escrow or the stake registry
// and would not revert, and answers once both indexes hold its block. It always answers
// synchronously (Prefer: respond-async is not applied), and holds at most
// maxInFlightPerWallet relays of one wallet at once, on top of its client address's writes
// in flight.
func (s *Server) relay(c echo.Context) error {
	var req RelayRequest
	if err := bindJSON(c, &req); err != nil {
		return err
	}
	if len(req.RawTx) == 0 {
		return withDetail(ErrBadRequest, "rawTx is required")
	}
	var tx types.Transaction
	if err := tx.UnmarshalBinary(req.RawTx); err != nil {
		return withDetail(txn.ErrNotRelayable, "not a signed transaction: %v", err)
	}
	// A transaction whose sender does not recover is refused by the relay below.
	if from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), &tx); err == nil {
		leave, ok := s.inFlight.enter("wallet "+from.Hex(), maxInFlightPerWallet)
		if !ok {
			return withDetail(ErrTooManyInFlight, "at most %d relayed transactions of one wallet in flight; retry once one is mined", maxInFlightPerWallet)
		}
		defer leave()
	}
	ctx := c.Request().Context()
	var res any
	var block uint64
	switch to := tx.To(); {
	case to != nil && *to == s.cfg.Bounties.Escrow():
		r, err := s.cfg.Bounties.Relay(ctx, req.RawTx)
		if err != nil {
			return err
		}
		res, block = r, r.Block
	case to != nil && *to == s.cfg.Staking.Registry():
		r, err := s.cfg.Staking.Relay(ctx, req.RawTx)
		if err != nil {
			return err
		}
		res, block = r, r.Block
	default:
		return withDetail(txn.ErrNotRelayable, "the node relays only calls to the escrow %s and the stake registry %s",
			s.cfg.Bounties.Escrow().Hex(), s.cfg.Staking.Registry().Hex())
	}
	if err := s.cfg.Stakes.WaitIndexed(ctx, block); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
