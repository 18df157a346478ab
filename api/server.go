package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/surety-ioa/surety/identity"
)

// BlockReader reads the chain head. It returns an error when the chain does not answer.
type BlockReader interface {
	BlockNumber(ctx context.Context) (uint64, error)
}

// Pinger checks that a dependency (the database) is usable.
type Pinger interface {
	PingContext(ctx context.Context) error
}

// Contract names one deployed contract.
type Contract struct {
	Name    string
	Address common.Address
}

// ChainInfo describes the chain the node settles on. It does not change while the node runs.
type ChainInfo struct {
	ID      uint64
	Genesis common.Hash
	// Kind is "embedded" for the in-process chain or "rpc" for an external one.
	Kind string
	// Key scopes the node's chain-derived state (see internal/chain.Key).
	Key       string
	Contracts []Contract
	// MinStake is the deployment's minimum stake (StakeRegistry.minStake, base units): below
	// it an agent counts as unstaked.
	MinStake *big.Int
	// Confirmations is how many blocks the node's indexes wait before trusting an event.
	Confirmations uint64
}

// Config assembles a Server.
type Config struct {
	Version string
	Chain   ChainInfo
	Blocks  BlockReader
	DB      Pinger
	// Identity serves the DID, resolution and envelope routes.
	Identity Identity
	// Bounties, Staking, Senders, Wallets and Stakes serve the bounty and stake routes;
	// without them the routes are absent.
	Bounties Bounties
	Staking  Staking
	Senders  Senders
	Wallets  Wallets
	Stakes   StakeIndex
	// ChainRPC serves POST /v1/rpc, the JSON-RPC a client's own wallet sends through (with
	// the bounty and stake routes).
	ChainRPC ChainRPC
	// Indexes are the node's chain indexes; /v1/info reports the lowest block they all hold.
	Indexes []Index
	// Jobs serves the ERC-8183 job routes (GET /v1/jobs, /v1/jobs/{id}); without it they
	// are absent.
	Jobs Jobs
	// Agents serves the registry routes; without it they are absent.
	Agents Agents
	// ERC8004 serves the ERC-8004 routes (agent ids, feedback, registration files); without
	// it they are absent.
	ERC8004 ERC8004
	// ERC8004Relay, with the chain routes, relays wallets' own calls of the ERC-8004
	// registries (POST /v1/rpc); without it they are not relayed.
	ERC8004Relay ERC8004Relay
	// Reputation serves the audit and reputation routes; without it they are absent.
	Reputation Reputation
	// Groups serves the group thread routes; without it they are absent.
	Groups Groups
	// AuditLog serves the log routes (head, proofs); without it they are absent.
	AuditLog AuditLog
	// ScoredHeads serves the scores of anchored heads (GET /v1/log/scores and
	// /v1/reputation/{did}/history); without it those routes are absent.
	ScoredHeads ScoredHeads
	// Credentials serves the VC 2.0 credential and status list routes; without it they are
	// absent. CredentialStakes (the chain's index) says which DIDs hold the minimum stake, so
	// their credentials carry a status entry; with StakeHistory too, GET
	// /v1/credentials/{did}/stake is served.
	Credentials      Credentials
	CredentialStakes CredentialStakes
	StakeHistory     StakeHistory
	// Peers serves GET /v1/peers and the peer in /v1/info; PeerBinding is the node DID's
	// signature over its peer id.
	Peers       Peers
	PeerBinding string
	// Explorer serves the web explorer (explorer.Handler) under /explorer/, and GET /
	// redirects to it; without it neither is served.
	Explorer http.Handler
	// CORSOrigins are the origins whose browsers may call the API (ParseOrigin's form; "*":
	// any): their preflights are answered and their pages may read the answers. Empty: only
	// the node's own origin (the explorer).
	CORSOrigins []string
	Logger      *slog.Logger
	// RequestTimeout bounds each request's handler; 0 means 30s.
	RequestTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included, and ReadHeaderTimeout its
	// headers; IdleTimeout closes a kept-alive connection that sends nothing. 0 means the
	// defaults in limits.go.
	ReadTimeout, ReadHeaderTimeout, IdleTimeout time.Duration
	// WriteRate (per second) and WriteBurst bound the writes (POST, PUT) from one client
	// address; 0 means the defaults in limits.go.
	WriteRate  float64
	WriteBurst int
	// RPCRate (per second) and RPCBurst bound the POST /v1/rpc calls from one client
	// address, on top of the write limit: each may make the node's chain compute a call or
	// a gas estimate. 0 means the defaults in limits.go.
	RPCRate  float64
	RPCBurst int
	// LeafPageRate (per second) and LeafPageBurst bound the pages of the log's leaves (GET
	// /v1/log/leaves) one client address reads; 0 means the defaults in limits.go.
	LeafPageRate  float64
	LeafPageBurst int
	// SearchRate (per second) and SearchBurst bound the searches (GET /v1/agents) one client
	// address makes; 0 means the defaults in limits.go.
	SearchRate  float64
	SearchBurst int
	// Operations is the database that keeps the operations of Prefer: respond-async writes
	// across restarts, under the chains-table row OperationsChain; nil keeps them in memory.
	Operations      *sql.DB
	OperationsChain int64
	// PublicURL is the node's API base URL as others reach it (https://node.example): the
	// interface of the node's A2A card and the links in served cards are made from it, never
	// from a request's Host header (a signed card must not name a host a caller picked), and
	// credentials name the node's status lists under it. Empty: the node's card names no
	// interface, served cards carry no links, and credentials name the status lists under the
	// scheme and host each request came to (the node always sets it: node.Config.PublicURL).
	PublicURL string
	// TrustedProxies are the proxies whose X-Forwarded-For names the client. Without them the
	// client is the socket's peer, and the header is ignored: a client cannot pick the address
	// its limits are counted under.
	TrustedProxies []*net.IPNet
}

// Server is the node's HTTP API.
type Server struct {
	cfg  Config
	echo *echo.Echo
	log  *slog.Logger
	// closing ends when Serve starts to shut down: event streams end with it, so a client
	// that keeps one open cannot hold the shutdown.
	closing context.Context
	// resumeOnce makes Serve carry on the operations of a previous run once.
	resumeOnce sync.Once
	// ops are the writes carried on after 202 Accepted.
	ops *opStore
	// inFlight counts the writes in flight per client address and per relayed wallet.
	inFlight inFlight
	// mcp counts the /mcp requests in flight (MountMCP).
	mcp mcpCount
	// checkpoint is the last checkpoint signed, served again while the head is the same.
	checkpoint signedCheckpoint
	// The node's own A2A card, signed once (see nodeCard); agents' cards, signed once per
	// content (see agentCards).
	nodeCardOnce sync.Once
	nodeCardJSON []byte
	nodeCardErr  error
	agentCards   agentCardCache
}

// New builds the API server and registers its routes.
func New(cfg Config) (*Server, error) {
	if cfg.Blocks == nil || cfg.DB == nil || cfg.Identity == nil {
		return nil, errors.New("api: Blocks, DB and Identity are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = defaultRequestTimeout
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = defaultReadTimeout
	}
	if cfg.ReadHeaderTimeout == 0 {
		cfg.ReadHeaderTimeout = defaultReadHeaderTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.WriteRate == 0 {
		cfg.WriteRate = defaultWriteRate
	}
	if cfg.WriteBurst == 0 {
		cfg.WriteBurst = defaultWriteBurst
	}
	if cfg.LeafPageRate == 0 {
		cfg.LeafPageRate = leafPageRate
	}
	if cfg.LeafPageBurst == 0 {
		cfg.LeafPageBurst = leafPageBurst
	}
	if cfg.SearchRate == 0 {
		cfg.SearchRate = searchRate
	}
	if cfg.SearchBurst == 0 {
		cfg.SearchBurst = searchBurst
	}
	if cfg.RPCRate == 0 {
		cfg.RPCRate = defaultRPCRate
	}
	if cfg.RPCBurst == 0 {
		cfg.RPCBurst = defaultRPCBurst
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	ops, err := newOpStore(context.Background(), cfg.Operations, cfg.OperationsChain, cfg.Logger)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, echo: e, log: cfg.Logger, closing: context.Background(), ops: ops}
	e.HTTPErrorHandler = errorHandler(s.log)
	e.IPExtractor = clientAddress(cfg.TrustedProxies)
	origins := make([]string, len(cfg.CORSOrigins))
	for i, o := range cfg.CORSOrigins {
		if origins[i], err = ParseOrigin(o); err != nil {
			return nil, fmt.Errorf("api: %w", err)
		}
	}
	e.Pre(cors(origins))
	e.Use(s.logRequests, s.recoverPanics, s.limitWrites(), s.limitBody, s.ingress, s.timeout)

	// Every route registered here is described in openapi.json, and TestOpenAPICoversEveryRoute
	// fails until it is: add the operation there with the route.
	e.GET("/healthz", s.health)
	e.GET("/1.0/identifiers/:did", s.resolveDID)
	e.GET(nodeCardPath, s.getNodeCard)
	if cfg.Explorer != nil {
		// The explorer is the API's client on the same origin: a page of the node's own routes.
		page := echo.WrapHandler(cfg.Explorer)
		e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/explorer/") })
		e.GET("/explorer", page)
		e.GET("/explorer/", page)
		e.GET("/explorer/:file", page)
	}
	v1 := e.Group("/v1")
	// One budget of chain calls per client address, shared by the routes whose every request
	// makes the node's chain compute: POST /v1/rpc and GET /v1/credentials/{did}/stake.
	limitChainCalls := s.limitRPC()
	v1.GET("/info", s.info)
	v1.GET("/openapi.json", s.openAPI)
	// No POST /v1/dids: making and keeping a key for anyone who asks cost the node a scrypt
	// (32 MiB) and a stored key per request, unauthenticated, and nothing used hosted keys.
	v1.GET("/challenge", s.challenge)
	v1.POST("/dids/register", s.register)
	v1.POST("/envelopes/verify", s.verifyEnvelope)
	if cfg.Peers != nil {
		v1.GET("/peers", s.peers)
	}
	if cfg.Agents != nil {
		v1.POST("/agents", s.registerAgent)
		v1.GET("/agents", s.searchAgents, limitPerAddress(cfg.SearchRate, cfg.SearchBurst, "searches", nil))
		v1.GET("/agents/:did", s.getAgent)
		v1.GET("/agents/:did/agent-card.json", s.getAgentCard)
		v1.POST("/agents/:did/status", s.checkAgentStatus)
	}
	if cfg.ERC8004 != nil {
		s.routeERC8004(v1)
	}
	if cfg.Credentials != nil {
		v1.GET("/credentials/:did/registration", s.registrationCredential)
		v1.POST("/credentials/verify", s.verifyCredential)
		v1.GET("/status/:list", s.statusList)
		if cfg.CredentialStakes != nil && cfg.StakeHistory != nil {
			v1.GET("/credentials/:did/stake", s.stakeCredential, limitChainCalls)
		}
	}
	if cfg.Reputation != nil {
		v1.POST("/audits", s.submitAudit)
		v1.GET("/reputation", s.topReputation)
		v1.GET("/reputation/:did", s.getReputation)
	}
	if cfg.Groups != nil {
		v1.POST("/groups/:group_id/members", s.setGroupMembers)
		v1.GET("/groups/:group_id", s.getGroup)
		v1.POST("/groups/:group_id/envelopes", s.postGroupEnvelope)
		v1.GET("/groups/:group_id/envelopes", s.listGroupEnvelopes)
		v1.GET("/groups/:group_id/stream", s.streamGroup)
	}
	if cfg.AuditLog != nil {
		v1.GET("/log/head", s.logHead)
		v1.GET("/log/checkpoint", s.logCheckpoint)
		v1.GET("/log/proof/inclusion", s.inclusionProof)
		v1.GET("/log/proof/consistency", s.consistencyProof)
		v1.GET("/log/leaves", s.logLeaves, limitPerAddress(cfg.LeafPageRate, cfg.LeafPageBurst, "pages of the log's leaves", nil))
		v1.GET("/log/heads", s.logHeads, limitPerAddress(cfg.LeafPageRate, cfg.LeafPageBurst, "pages of the log's heads", nil))
	}
	if cfg.ScoredHeads != nil {
		v1.GET("/log/scores", s.logScores, limitPerAddress(cfg.LeafPageRate, cfg.LeafPageBurst, "pages of an anchored head's scores", nil))
		v1.GET("/reputation/:did/history", s.scoreHistory)
	}
	if cfg.Jobs != nil {
		v1.GET("/jobs", s.listJobs)
		v1.GET("/jobs/:id", s.getJob)
	}
	if cfg.Bounties != nil && cfg.Staking != nil && cfg.Senders != nil && cfg.Wallets != nil && cfg.Stakes != nil {
		v1.POST("/bindings", s.addBinding, s.async)
		v1.POST("/bounties", s.postBounty, s.async)
		v1.GET("/bounties", s.listBounties)
		v1.GET("/bounties/:id", s.getBounty)
		v1.GET("/bounties/:id/events", s.bountyEvents)
		v1.PUT("/bounties/:id/spec", s.putBountySpec)
		v1.POST("/bounties/:id/:action", s.bountyAction, s.async)
		v1.POST("/withdraw", s.withdraw, s.async)
		v1.POST("/stake", s.stake, s.async)
		v1.POST("/stake/unbond", s.unbond, s.async)
		v1.POST("/stake/withdraw", s.withdrawStake, s.async)
		v1.GET("/stake/:did", s.getStake)
		v1.POST("/dids/revoke", s.revokeDID, s.async)
		v1.POST("/dids/rotate", s.rotateDID, s.async)
		// Never an operation: a relayed transaction is the wallet's own, it may be one the
		// chain will not mine soon, and its sender can follow it on chain by its hash.
		v1.POST("/tx/raw", s.relay, s.bounded)
		v1.GET("/operations/:id", s.getOperation)
		v1.GET("/operations/:id/events", s.operationEvents)
		if cfg.ChainRPC != nil {
			v1.POST("/rpc", s.rpc, limitChainCalls)
		}
	}
	return s, nil
}

// Handler returns the server as an http.Handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.echo }

// Serve answers requests on ln until ctx ends, then shuts down gracefully: event streams end
// at once, and requests in flight finish for up to grace.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	s.closing = ctx
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// Requests in flight outlive ctx by up to grace; streams watch s.closing instead.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	s.resume()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("api: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("api: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("api: serve: %w", err)
	}
	// Operations end with ctx (the next run carries on the unfinished ones); wait for their
	// goroutines.
	s.ops.tasks.Wait()
	return nil
}

// clientAddress is how the node tells clients apart: the socket's peer, or, behind a trusted
// proxy, the address that proxy puts in X-Forwarded-For; an IPv6 client by its /64
// (clientKey). Every per-address quota (writes, JSON-RPC calls, envelope checks, operations
// in flight) counts by it.
func clientAddress(trusted []*net.IPNet) echo.IPExtractor {
	extract := echo.ExtractIPDirect()
	if len(trusted) > 0 {
		opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
		for _, n := range trusted {
			opts = append(opts, echo.TrustIPRange(n))
		}
		extract = echo.ExtractIPFromXFFHeader(opts...)
	}
	return func(r *http.Request) string { return clientKey(extract(r)) }
}

// clientKey is the client an address stands for: an IPv4 address itself (an IPv4-mapped IPv6
// one as IPv4), an IPv6 address its /64. One subscriber's network is a /64 at least, and a
// host in it takes any of its 2^64 addresses for free, so counting IPv6 addresses one by one
// would give one client a fresh quota per request. Anything else is kept as it came.
func clientKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	switch {
	case err != nil:
		return ip
	case a.Is4In6() || a.Is4():
		return a.Unmap().String()
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}

// limitWrites bounds the writes (POST, PUT) each client address makes, with a token bucket
// per address (WriteRate a second, WriteBurst above it); reads are not counted.
func (s *Server) limitWrites() echo.MiddlewareFunc {
	return limitPerAddress(s.cfg.WriteRate, s.cfg.WriteBurst, "writes", func(c echo.Context) bool {
		m := c.Request().Method
		return m != http.MethodPost && m != http.MethodPut
	})
}

// limitRPC bounds the JSON-RPC calls one client address makes (a wallet's write takes about
// ten; a loop of eth_call would have the node's chain compute for it).
func (s *Server) limitRPC() echo.MiddlewareFunc {
	return limitPerAddress(s.cfg.RPCRate, s.cfg.RPCBurst, "JSON-RPC calls", nil)
}

// limitPerAddress lets each client address make perSecond requests a second, in bursts of
// burst, of those skip does not pass (nil: all); what names them in the 429 problem.
func limitPerAddress(perSecond float64, burst int, what string, skip middleware.Skipper) echo.MiddlewareFunc {
	store := middleware.NewRateLimiterMemoryStoreWithConfig(middleware.RateLimiterMemoryStoreConfig{
		Rate: rate.Limit(perSecond), Burst: burst, ExpiresIn: writeLimiterExpiry})
	return middleware.RateLimiterWithConfig(middleware.RateLimiterConfig{
		Skipper:             skip,
		IdentifierExtractor: func(c echo.Context) (string, error) { return c.RealIP(), nil },
		Store:               store,
		ErrorHandler:        func(c echo.Context, err error) error { return withDetail(ErrBadRequest, "no client address") },
		DenyHandler: func(c echo.Context, addr string, err error) error {
			return withDetail(ErrTooManyRequests, "at most %g %s a second (bursts of %d) from one address", perSecond, what, burst)
		},
	})
}

// ingress names the client's address as the source of the envelopes the request has
// checked, so that identity counts them against that address's budget before it checks
// any signature (identity.WithIngress).
func (s *Server) ingress(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		c.SetRequest(r.WithContext(identity.WithIngress(r.Context(), "addr "+c.RealIP())))
		return next(c)
	}
}

// limitBody caps every request body, at maxBody or the route's own limit: a larger body is
// cut off (413 too-large) before the handler has read more than that.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		limit, ok := bodyLimits[c.Path()]
		if !ok {
			limit = maxBody
		}
		if req := c.Request(); req.Body != nil {
			req.Body = http.MaxBytesReader(c.Response(), req.Body, limit)
		}
		return next(c)
	}
}

// bodyError maps an error reading a request body: too large is ErrTooLarge (413), anything
// else (a client that stopped sending, a read timeout) a bad request.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return withDetail(ErrTooLarge, "the body is larger than %d bytes", mbe.Limit)
	}
	return withDetail(ErrBadRequest, "reading the body: %v", err)
}

func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				err = fmt.Errorf("panic in handler: %v", r)
			}
		}()
		return next(c)
	}
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			// Let the error mapper write the response now, so the logged status is the real one.
			c.Error(err)
		}
		req := c.Request()
		s.log.Debug("request", "method", req.Method, "path", req.URL.Path,
			"status", c.Response().Status, "bytes", c.Response().Size, "duration", time.Since(start))
		return nil
	}
}

// streams are the routes that answer with server-sent events: RequestTimeout does not
// apply to them.
var streams = map[string]bool{"/v1/bounties/:id/events": true, "/v1/groups/:group_id/stream": true, "/v1/operations/:id/events": true}

func (s *Server) timeout(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if streams[c.Path()] {
			// Open until the client leaves or the server shuts down.
			ctx, cancel := context.WithCancel(c.Request().Context())
			defer cancel()
			defer context.AfterFunc(s.closing, cancel)()
			c.SetRequest(c.Request().WithContext(ctx))
			return next(c)
		}
		ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.RequestTimeout)
		defer cancel()
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}
