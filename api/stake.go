package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// stakeOp runs a stake op for the signer's own agent (keccak256 of its DID), from a wallet the
// node holds and the signer is bound to.
func (s *Server) stakeOp(c echo.Context, kind stake.OpKind) error {
	req, err := s.authenticate(c)
	if err != nil {
		return err
	}
	op := stake.Op{Kind: kind, Agent: identity.AgentID(req.sender)}
	var fp, named string
	if kind == stake.OpWithdrawStake {
		var b StakeWithdrawBody
		if err := decodeBody(req.envelope, &b); err != nil {
			return err
		}
		op.From, fp, named = b.Wallet, fingerprint(string(kind), b), b.Op
	} else {
		var b StakeBody
		if err := decodeBody(req.envelope, &b); err != nil {
			return err
		}
		named = b.Op
		if b.Amount == "" {
			return withDetail(ErrBadRequest, "body.amount is required")
		}
		if op.Amount, err = parseAmount(b.Amount, "amount"); err != nil {
			return err
		}
		if op.Amount.Sign() == 0 {
			return withDetail(ErrBadRequest, "body.amount must be positive")
		}
		op.From, fp = b.Wallet, fingerprint(string(kind), b)
	}
	if named != string(kind) {
		return withDetail(ErrBadRequest, "body.op must be %q on %s", kind, c.Path())
	}
	ctx := c.Request().Context()
	if err := s.authorizeWallet(ctx, req.sender, op.From); err != nil {
		return err
	}
	return once(s, c, req, fp, http.StatusOK,
		func(ctx context.Context, idem txn.Idempotency) (*stake.Result, error) {
			return s.cfg.Staking.Do(ctx, op, idem)
		},
		func(ctx context.Context, idem txn.Idempotency) (*stake.Result, error) {
			return s.cfg.Staking.Retry(ctx, op, idem)
		},
		func(ctx context.Context, res *stake.Result) {
			// Every node's index follows the stake change and re-ranks the agent's card; waiting
			// for this node's index lets the answer's reader search and see it. The stake is on
			// chain whatever happens here.
			if err := s.cfg.Stakes.WaitIndexed(ctx, res.Block); err != nil {
				s.log.Warn("stake: wait for the stake index", "block", res.Block, "err", err)
			}
		})
}

func (s *Server) stake(c echo.Context) error         { return s.stakeOp(c, stake.OpStake) }
func (s *Server) unbond(c echo.Context) error        { return s.stakeOp(c, stake.OpUnbond) }
func (s *Server) withdrawStake(c echo.Context) error { return s.stakeOp(c, stake.OpWithdrawStake) }

// getStake answers an agent's stake under one wallet (?wallet=, required), read from the chain.
func (s *Server) getStake(c echo.Context) error {
	did, err := pathDID(c)
	if err != nil {
		return err
	}
	w := c.QueryParam("wallet")
	if !common.IsHexAddress(w) {
		return withDetail(ErrBadRequest, "?wallet= must be the controller's address, got %q", w)
	}
	rec, err := s.cfg.Staking.StakeOf(c.Request().Context(), identity.AgentID(did), common.HexToAddress(w))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrChainUnavailable, err)
	}
	return c.JSON(http.StatusOK, rec)
}

// KeyChange answers POST /v1/dids/revoke and /v1/dids/rotate: the transaction, the stake
// the wallet holds after it (the successor's, for a rotation), and the key status of the
// signer's DID as this node's index then has it.
type KeyChange struct {
	stake.Result
	Key stake.KeyState `json:"key"`
}

func (s *Server) revokeDID(c echo.Context) error { return s.changeKey(c, stake.OpRevoke) }
func (s *Server) rotateDID(c echo.Context) error { return s.changeKey(c, stake.OpRotate) }

// changeKey revokes or rotates the signer's own agent from a wallet the node holds and the
// signer is bound to. The answer comes once the node's index holds the change, so every
// envelope of the old DID is refused here from then on.
func (s *Server) changeKey(c echo.Context, kind stake.OpKind) error {
	req, err := s.authenticate(c)
	if err != nil {
		return err
	}
	op := stake.Op{Kind: kind, Agent: identity.AgentID(req.sender)}
	var named, fp string
	var rot RotateBody
	if kind == stake.OpRevoke {
		var b RevokeBody
		if err := decodeBody(req.envelope, &b); err != nil {
			return err
		}
		op.From, named, fp = b.Wallet, b.Op, fingerprint(string(kind), b)
	} else {
		if err := decodeBody(req.envelope, &rot); err != nil {
			return err
		}
		op.From, named, fp = rot.Wallet, rot.Op, fingerprint(string(kind), rot)
	}
	if named != string(kind) {
		return withDetail(ErrBadRequest, "body.op must be %q on %s", kind, c.Path())
	}
	ctx := c.Request().Context()
	if err := s.authorizeWallet(ctx, req.sender, op.From); err != nil {
		return err
	}
	if kind == stake.OpRotate {
		if op.Proof, err = s.successorBinding(ctx, req.sender, rot); err != nil {
			return err
		}
		op.Successor = identity.AgentID(rot.Successor.DID)
	}
	return once(s, c, req, fp, http.StatusOK,
		func(ctx context.Context, idem txn.Idempotency) (*KeyChange, error) {
			res, err := s.cfg.Staking.Do(ctx, op, idem)
			if err != nil {
				return nil, err
			}
			return &KeyChange{Result: *res}, nil
		},
		func(ctx context.Context, idem txn.Idempotency) (*KeyChange, error) {
			res, err := s.cfg.Staking.Retry(ctx, op, idem)
			if err != nil {
				return nil, err
			}
			return &KeyChange{Result: *res}, nil
		},
		func(ctx context.Context, res *KeyChange) {
			// The change is on chain whatever happens here; the key status shows it once this
			// node's index holds its block.
			if err := s.cfg.Stakes.WaitIndexed(ctx, res.Block); err != nil {
				s.log.Warn("key change: wait for the stake index", "block", res.Block, "err", err)
			}
			key, err := s.cfg.Stakes.KeyState(ctx, req.sender)
			if err != nil {
				s.log.Warn("key change: read the key status", "did", req.sender, "err", err)
			}
			res.Key = key
		})
}

// successorBinding is the binding a rotation records for the successor: the new key's half,
// from the request, completed with the wallet's half, which the node signs with the wallet
// it holds once the new key's half verifies. It must name the request's wallet, this chain
// and registry, and a DID other than the signer's that the chain has not closed.
func (s *Server) successorBinding(ctx context.Context, sender string, b RotateBody) ([]byte, error) {
	st := identity.BindingStatement(b.Successor)
	switch {
	case st.Wallet != b.Wallet:
		return nil, withDetail(ErrBadRequest, "body.successor.wallet %s is not body.wallet %s", st.Wallet.Hex(), b.Wallet.Hex())
	case st.DID == sender:
		return nil, withDetail(ErrBadRequest, "body.successor.did is the signer's DID: rotate to a new key")
	case st.ChainID != s.cfg.Chain.ID || st.Registry != s.cfg.Staking.Registry():
		return nil, withDetail(identity.ErrWrongRegistry, "the successor's statement names chain %d registry %s; this node is on chain %d with registry %s",
			st.ChainID, st.Registry.Hex(), s.cfg.Chain.ID, s.cfg.Staking.Registry().Hex())
	}
	binding, err := identity.CompleteBinding(st, b.SuccessorJWS, func(data apitypes.TypedData) ([]byte, error) {
		return s.cfg.Senders.SignTypedData(ctx, b.Wallet, data)
	})
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(binding)
	if err != nil {
		return nil, err
	}
	if _, err := s.cfg.Wallets.CheckBinding(ctx, raw); err != nil {
		return nil, err
	}
	return raw, nil
}
