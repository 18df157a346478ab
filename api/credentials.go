package api

import (
	"context"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/labstack/echo/v4"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/stake"
)

// Credentials issues the node's W3C VC 2.0 credentials (application/vc+jwt) and publishes its
// Bitstring Status Lists (identity.Service). Errors: identity.ErrNotFound (a DID the node does
// not know, a list it does not use), identity.ErrDeactivated (a DID the chain closed).
type Credentials interface {
	NodeDID() string
	RegistrationCredential(ctx context.Context, did, base string, staked bool) (string, error)
	RegistrationCredentialV1(ctx context.Context, did string) (string, error)
	StakeCredential(ctx context.Context, subj identity.StakeSubject, base string) (string, error)
	StatusList(ctx context.Context, n int, base string) (string, error)
}

// CredentialStakes is what the chain's index says of a DID's stake (stake.Index): the wallets
// that control it, and the stake that counts under each.
type CredentialStakes interface {
	WalletsOf(ctx context.Context, did string) ([]common.Address, error)
	StakeOf(ctx context.Context, did string, controller common.Address) (*big.Int, error)
	KeyState(ctx context.Context, did string) (stake.KeyState, error)
}

// StakeHistory reads a stake record as it stood at a block, with the block's hash
// (stake.Service): what a stake credential states.
type StakeHistory interface {
	HoldingAt(ctx context.Context, agent common.Hash, wallet common.Address, block uint64) (*stake.Holding, common.Hash, error)
	Registry() common.Address
}

var (
	_ Credentials      = (*identity.Service)(nil)
	_ CredentialStakes = (*stake.Index)(nil)
	_ StakeHistory     = (*stake.Service)(nil)
)

// publicBase is the URL credentials name the node's status lists under: Config.PublicURL, or
// the scheme and host the request came to.
func (s *Server) publicBase(c echo.Context) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimSuffix(s.cfg.PublicURL, "/")
	}
	return c.Scheme() + "://" + c.Request().Host
}

// pathDID is the route's {did}, unescaped and parsed; a bad one is bad-request, naming why.
func pathDID(c echo.Context) (string, error) {
	did, err := url.PathUnescape(c.Param("did"))
	if err != nil {
		return "", withDetail(ErrBadRequest, "DID: %v", err)
	}
	if _, err := identity.ParseDID(did); err != nil {
		return "", withDetail(ErrBadRequest, "%v", err)
	}
	return did, nil
}

// didParam is pathDID for the credential routes, whose refusal of a DID that does not parse is
// invalid-did (the DID error itself), as the resolver's is.
func didParam(c echo.Context) (string, error) {
	did, err := url.PathUnescape(c.Param("did"))
	if err != nil {
		return "", withDetail(ErrBadRequest, "DID: %v", err)
	}
	if _, err := identity.ParseDID(did); err != nil {
		return "", err
	}
	return did, nil
}

// minStake is the least stake that counts: the deployment's minimum, and at least one unit.
func (s *Server) minStake() *big.Int {
	if m := s.cfg.Chain.MinStake; m != nil && m.Sign() > 0 {
		return m
	}
	return big.NewInt(1)
}

// stakedWallet is the first wallet (in address order) under which did holds the minimum stake
// that counts, by the chain's index; want, when not zero, is the only one considered.
func (s *Server) stakedWallet(ctx context.Context, did string, want common.Address) (common.Address, bool, error) {
	if s.cfg.CredentialStakes == nil {
		return common.Address{}, false, nil
	}
	wallets, err := s.cfg.CredentialStakes.WalletsOf(ctx, did)
	if err != nil {
		return common.Address{}, false, err
	}
	for _, w := range wallets {
		if want != (common.Address{}) && w != want {
			continue
		}
		amt, err := s.cfg.CredentialStakes.StakeOf(ctx, did, w)
		if err != nil {
			return common.Address{}, false, err
		}
		if amt.Cmp(s.minStake()) >= 0 {
			return w, true, nil
		}
	}
	return common.Address{}, false, nil
}

// vcJWT answers a credential as application/vc+jwt.
func vcJWT(c echo.Context, jwt string) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.Blob(http.StatusOK, identity.VCJWTMediaType, []byte(jwt))
}

// registrationCredential answers GET /v1/credentials/{did}/registration: the VC 2.0
// registration credential, with a status entry when the DID holds the minimum stake; with
// ?version=1.1, the VC 1.1 VC-JWT the node issued when it registered the DID.
func (s *Server) registrationCredential(c echo.Context) error {
	did, err := didParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	switch v := c.QueryParam("version"); v {
	case "", "2.0":
	case "1.1":
		jwt, err := s.cfg.Credentials.RegistrationCredentialV1(ctx, did)
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "application/jwt", []byte(jwt))
	default:
		return withDetail(ErrBadRequest, "?version= is 2.0 (the default) or 1.1, got %q", v)
	}
	_, staked, err := s.stakedWallet(ctx, did, common.Address{})
	if err != nil {
		return err
	}
	jwt, err := s.cfg.Credentials.RegistrationCredential(ctx, did, s.publicBase(c), staked)
	if err != nil {
		return err
	}
	return vcJWT(c, jwt)
}

// stakeCredential answers GET /v1/credentials/{did}/stake[?wallet=]: the VC 2.0 stake
// credential, stating StakeRegistry.recordOf(agentId, wallet) at the node's confirmed head
// (head - Confirmations). It needs the minimum stake counted by the index and by the chain at
// that block.
func (s *Server) stakeCredential(c echo.Context) error {
	did, err := didParam(c)
	if err != nil {
		return err
	}
	var want common.Address
	if w := c.QueryParam("wallet"); w != "" {
		if !common.IsHexAddress(w) {
			return withDetail(ErrBadRequest, "?wallet= must be an address, got %q", w)
		}
		want = common.HexToAddress(w)
	}
	ctx := c.Request().Context()
	wallet, ok, err := s.stakedWallet(ctx, did, want)
	if err != nil {
		return err
	}
	if !ok {
		if st, err := s.cfg.CredentialStakes.KeyState(ctx, did); err != nil {
			return err
		} else if st.Closed() {
			return fmt.Errorf("%w: the chain %s %s", identity.ErrDeactivated, st.Status, did)
		}
		return &stake.Error{Err: stake.ErrNotStaked, Msg: fmt.Sprintf("%s holds less than the minimum stake (%s) under any wallet bound to it on chain", did, s.minStake())}
	}
	head, err := s.cfg.Blocks.BlockNumber(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrChainUnavailable, err)
	}
	block := head - min(head, s.cfg.Chain.Confirmations)
	h, hash, err := s.cfg.StakeHistory.HoldingAt(ctx, identity.AgentID(did), wallet, block)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrChainUnavailable, err)
	}
	amt, _ := new(big.Int).SetString(h.Staked, 10)
	if h.Status != stake.StatusBound || amt == nil || amt.Cmp(s.minStake()) < 0 {
		return &stake.Error{Err: stake.ErrNotStaked, Msg: fmt.Sprintf("at block %d the record of %s under %s is %s with %s staked", block, did, wallet.Hex(), h.Status, h.Staked)}
	}
	jwt, err := s.cfg.Credentials.StakeCredential(ctx, identity.StakeSubject{
		ID: did, AgentID: identity.AgentID(did).Hex(), Wallet: wallet.Hex(), Amount: h.Staked, Token: h.Token.Hex(),
		ChainID: s.cfg.Chain.ID, Registry: s.cfg.StakeHistory.Registry().Hex(), Block: block, BlockHash: hash.Hex(),
	}, s.publicBase(c))
	if err != nil {
		return err
	}
	return vcJWT(c, jwt)
}

// statusList answers GET /v1/status/{list}: the node's revocation list n as a
// BitstringStatusListCredential (application/vc+jwt).
func (s *Server) statusList(c echo.Context) error {
	n, err := strconv.Atoi(c.Param("list"))
	if err != nil || n < 0 {
		return withDetail(ErrBadRequest, "the list is a number from 0 to %d", identity.MaxStatusLists-1)
	}
	jwt, err := s.cfg.Credentials.StatusList(c.Request().Context(), n, s.publicBase(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", fmt.Sprintf("max-age=%d", int(identity.StatusListCacheTTL.Seconds())))
	return c.Blob(http.StatusOK, identity.VCJWTMediaType, []byte(jwt))
}

// verifyCredential answers POST /v1/credentials/verify (body: a vc+jwt, or JSON
// {"credential": "..."}): a credential this node issued, checked as `surety credential
// verify` does (signature by the node's DID, the window now, the status bit in the node's
// list). A refusal is the credential's problem.
func (s *Server) verifyCredential(c echo.Context) error {
	b, err := readBody(c)
	if err != nil {
		return err
	}
	raw := strings.TrimSpace(string(b))
	if strings.HasPrefix(raw, "{") {
		var req CredentialVerifyRequest
		if err := bindJSONBytes(b, &req); err != nil {
			return err
		}
		raw = req.Credential
	}
	ctx := c.Request().Context()
	v, err := identity.VerifyCredentialJWT(raw, identity.CredentialCheck{Issuer: s.cfg.Credentials.NodeDID()})
	if err != nil {
		return err
	}
	out := CredentialVerdict{Valid: true, ID: v.Credential.ID, Type: v.Credential.Type, Issuer: v.Credential.Issuer,
		ValidFrom: v.Credential.ValidFrom, ValidUntil: v.Credential.ValidUntil, Subject: v.Credential.CredentialSubject, Status: "none"}
	if st := v.Credential.CredentialStatus; st != nil {
		base, n, ok := identity.SplitStatusListURL(st.StatusListCredential)
		if !ok {
			return &identity.CredentialError{Reason: identity.ErrCredentialStatus, Detail: "the status list is not one of this node's"}
		}
		listJWT, err := s.cfg.Credentials.StatusList(ctx, n, base)
		if err != nil {
			return err
		}
		list, err := identity.VerifyCredentialJWT(listJWT, identity.CredentialCheck{Issuer: s.cfg.Credentials.NodeDID()})
		if err != nil {
			return err
		}
		if err := identity.CheckCredentialStatus(v, list); err != nil {
			return err
		}
		out.Status = "active"
	}
	return c.JSON(http.StatusOK, out)
}
