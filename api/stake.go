package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/ethereum/go-ethereum/common"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// StakeBody is the envelope body of POST /v1/stake and POST /v1/stake/unbond: what to do
// (Op: "stake" or "unbond", so a signature for one cannot be spent on the other), the wallet
// that controls the signer's agent, and the amount in the stake token's base unit (wei for
// ETH), as a decimal string.
type StakeBody struct {
	Op     string         `json:"op"`
	Wallet common.Address `json:"wallet"`
	Amount string         `json:"amount"`
}

// StakeWithdrawBody is the envelope body of POST /v1/stake/withdraw; Op is "withdraw-stake".
type StakeWithdrawBody struct {
	Op     string         `json:"op"`
	Wallet common.Address `json:"wallet"`
}

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
	did, err := url.PathUnescape(c.Param("did"))
	if err != nil {
		return withDetail(ErrBadRequest, "DID: %v", err)
	}
	if _, err := identity.ParseDID(did); err != nil {
		return withDetail(ErrBadRequest, "%v", err)
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
