package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/memlimit"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/units"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// defaultListen is the API address: loopback only, on a port few other programs use.
const defaultListen = "127.0.0.1:7746"

// defaultRPCTimeout bounds the first call to an external chain at start.
const defaultRPCTimeout = 5 * time.Second

// syncWaitForPeer is how many anti-entropy rounds a node with peers to find waits for one
// that answers before it counts as synced anyway (p2p.SyncConfig.WaitForPeer).
const syncWaitForPeer = 5

// nodeConfig is everything `surety node` needs, gathered from flags and files.
type nodeConfig struct {
	DataDir string
	Listen  string
	// RPC is the external chain's URL; empty runs the embedded chain.
	RPC string
	// RequestTimeout bounds a request, a write's transaction included; 0: per chain
	// (requestTimeout).
	RequestTimeout time.Duration
	// ConfirmationsGiven says Confirmations was set; otherwise it is per chain: 0 on dev
	// chains, publicConfirmations elsewhere.
	ConfirmationsGiven bool
	// Deployment says where the contracts are on the RPC chain.
	Deployment  *contracts.Deployment
	DevAccounts int
	RPCTimeout  time.Duration
	LogEpoch    time.Duration
	LogGrace    time.Duration
	// AnchorWallet anchors the audit log on chain; empty: dev account 0 where the node holds
	// the dev wallets, else no anchoring.
	AnchorWallet string
	// LogQuorum is how many distinct staked nodes must sign a peer's log head before the
	// node adopts its epoch (unless its signer anchored it on chain).
	LogQuorum int
	// RegisterNode stakes the node's DID from the anchoring wallet at start, so its log heads
	// count on other nodes: "auto" does on dev chains, "yes" anywhere, "no" never.
	RegisterNode string
	Logger       *slog.Logger
	// PassphraseFile holds the keystore passphrase (see loadPassphrase).
	PassphraseFile string
	// KDF is the keystore's scrypt cost; zero means identity.DefaultKDF.
	KDF identity.KDFParams
	// Confirmations the escrow index waits for.
	Confirmations uint64
	// TrustedProxies are the proxies whose X-Forwarded-For names the client (api.Config).
	TrustedProxies []*net.IPNet
	// MinStake is the minimum stake (base units) the embedded chain's deployment fixes; nil
	// means contracts.DefaultMinStake. On any other chain the StakeRegistry's minStake rules,
	// read from the chain, so every node of a deployment counts stake alike.
	MinStake *big.Int
	// DevWallets makes the node hold the dev accounts' wallets on an --rpc-url chain too (the
	// devnet funds them); the embedded chain always does.
	DevWallets bool
	// P2PListen are the libp2p listen multiaddrs; Bootstrap the peers to join through.
	P2PListen []string
	Bootstrap []string
	// SyncEvery is the time between rounds of anti-entropy (0: p2p's default, 10 s).
	SyncEvery time.Duration
	// DenyFile, when set, names the peer ids the node refuses to connect to, reread as it
	// changes.
	DenyFile string
	// ScoreStep is the step of the time scores are computed at (0: the log epoch).
	ScoreStep time.Duration
}

func runNodeCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "node", "[flags]", strings.TrimSpace(`
Run a Surety node: open (and migrate) the SQLite database in --data-dir, connect to a chain,
and serve the HTTP API on --listen until SIGINT or SIGTERM.

With no --rpc-url the node runs an embedded in-process chain (chain id 1337) with funded dev
accounts, whose keys it prints, and deploys every contract at start. The embedded chain's
state ends with the process. With --rpc-url URL --deployment FILE it uses an external chain such
as Anvil (see 'surety deploy' and 'surety devnet').`))
	cfg := nodeConfig{}
	fs.StringVar(&cfg.DataDir, "data-dir", defaultDataDir(e), "directory for the node's database and keys")
	fs.StringVar(&cfg.Listen, "listen", defaultListen, "address of the HTTP API")
	rpcURL := fs.rpcURL("JSON-RPC URL of an external chain (default: the embedded chain)")
	deployment := fs.String("deployment", "", "deployment file naming the contract addresses on the --rpc-url chain")
	fs.IntVar(&cfg.DevAccounts, "dev-accounts", 10, "funded dev accounts on the embedded chain")
	fs.DurationVar(&cfg.RPCTimeout, "rpc-timeout", defaultRPCTimeout, "how long to wait for the --rpc-url chain to answer at start")
	fs.DurationVar(&cfg.LogEpoch, "log-epoch", time.Hour, "how much audit time one append to the audit log covers (whole seconds)")
	fs.StringVar(&cfg.AnchorWallet, "anchor-wallet", "", "a wallet the node holds that anchors the audit log's heads on chain (default: dev account 0 on dev chains; none elsewhere)")
	fs.IntVar(&cfg.LogQuorum, "log-quorum", reputation.DefaultQuorum, "how many distinct staked nodes must sign a peer's audit-log head before this node adopts its epoch (a head its signer anchored on chain needs none more)")
	fs.StringVar(&cfg.RegisterNode, "register-node", "auto", "stake the node's DID at the deployment's minimum from the anchoring wallet, so other nodes count its log heads: auto (on dev chains), yes, no")
	fs.DurationVar(&cfg.LogGrace, "log-grace", 15*time.Minute, "how long after its end an epoch of the audit log closes; keep it above the envelope lifetime (10m) plus skew, or late audits are refused")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", 0, "how long a request may take, a write's transaction and confirmations included (default: 30s on the embedded chain, 5m on others)")
	confirmations := fs.Int("confirmations", -1, "blocks the indexes wait before trusting an event (default: 0 on dev chains, the embedded one and Anvil's 31337; 2 elsewhere)")
	fs.BoolVar(&cfg.DevWallets, "dev-wallets", false, "hold the public dev accounts' wallets on the --rpc-url chain (devnets only)")
	p2pListen := fs.String("p2p-listen", strings.Join(p2p.DefaultListen, ","), "libp2p listen multiaddrs, comma-separated")
	bootstrap := fs.String("bootstrap", "", "peers to join the network through: multiaddrs with /p2p/<id>, comma-separated")
	fs.DurationVar(&cfg.SyncEvery, "sync-every", 10*time.Second, "how often the node pulls from peers the cards, group envelopes, audits and log epochs gossip did not bring it")
	fs.StringVar(&cfg.DenyFile, "p2p-deny", "", "file of peer ids (whitespace- or comma-separated) the node refuses to connect to; reread when it changes")
	fs.DurationVar(&cfg.ScoreStep, "score-step", 0, "scores are computed as of the start of each step of this length, the same instant on every node (default: --log-epoch)")
	fs.StringVar(&cfg.PassphraseFile, "passphrase-file", "", "file holding the passphrase that encrypts the node's keys (default: $"+passphraseEnv+", else one generated in --data-dir)")
	minStake := fs.String("min-stake", "", "embedded chain only: the minimum stake its deployment fixes (default 0.1ether); elsewhere StakeRegistry.minStake rules")
	trustedProxy := fs.String("trusted-proxy", "", "proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For names the client; without it the client is the socket's peer")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	memLimit := fs.String("memory-limit", "128MiB", "soft limit on the node's Go memory: past max(this, 1.5 × the live heap) the garbage collector works harder instead of the process growing (0: Go's default; GOMEMLIMIT in the environment wins)")
	if err := fs.parse(args); err != nil {
		return err
	}
	floor, err := memlimit.ParseSize(*memLimit)
	if err != nil {
		return usagef("--memory-limit: %v", err)
	}
	cfg.RPC = *rpcURL
	if *confirmations >= 0 {
		cfg.Confirmations, cfg.ConfirmationsGiven = uint64(*confirmations), true
	}
	logger, err := newLogger(e.stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	if *minStake != "" {
		if cfg.RPC != "" {
			return usagef("--min-stake is for the embedded chain: on --rpc-url the deployment's StakeRegistry fixes it (surety deploy --min-stake)")
		}
		if cfg.MinStake, err = parseAmount(*minStake); err != nil {
			return usagef("--min-stake: %v", err)
		}
	}
	cfg.Logger = logger
	for _, p := range splitList(*trustedProxy) {
		if !strings.Contains(p, "/") {
			if ip := net.ParseIP(p); ip != nil && ip.To4() != nil {
				p += "/32"
			} else {
				p += "/128"
			}
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			return usagef("--trusted-proxy %q is not an IP or CIDR", p)
		}
		cfg.TrustedProxies = append(cfg.TrustedProxies, n)
	}
	if cfg.ScoreStep < 0 || (cfg.ScoreStep > 0 && cfg.ScoreStep < time.Second) {
		return usagef("--score-step must be at least 1s, got %s", cfg.ScoreStep)
	}
	if cfg.SyncEvery < 100*time.Millisecond {
		return usagef("--sync-every must be at least 100ms, got %s", cfg.SyncEvery)
	}
	if cfg.DenyFile != "" {
		if _, err := readDenyFile(cfg.DenyFile); err != nil {
			return usagef("--p2p-deny: %v", err)
		}
	}
	cfg.P2PListen, cfg.Bootstrap = splitList(*p2pListen), splitList(*bootstrap)
	if _, err := p2p.ParseAddrs(cfg.Bootstrap); err != nil {
		return usagef("--bootstrap: %v", err)
	}
	if *deployment != "" {
		if cfg.RPC == "" {
			return usagef("--deployment needs --rpc-url: the embedded chain deploys its own contracts")
		}
		if cfg.Deployment, err = readDeployment(*deployment); err != nil {
			return startError{err}
		}
	}
	if cfg.DevAccounts < 1 || cfg.DevAccounts > 1000 {
		return usagef("--dev-accounts must be between 1 and 1000, got %d", cfg.DevAccounts)
	}
	if cfg.LogEpoch < time.Second || cfg.LogEpoch%time.Second != 0 {
		return usagef("--log-epoch must be a whole number of seconds, at least 1s, got %s", cfg.LogEpoch)
	}
	if cfg.AnchorWallet != "" && !common.IsHexAddress(cfg.AnchorWallet) {
		return usagef("--anchor-wallet %q is not an address", cfg.AnchorWallet)
	}
	if cfg.LogQuorum < 1 {
		return usagef("--log-quorum must be at least 1, got %d", cfg.LogQuorum)
	}
	switch cfg.RegisterNode {
	case "auto", "yes", "no":
	default:
		return usagef("--register-node takes auto, yes or no, got %q", cfg.RegisterNode)
	}
	if cfg.LogGrace <= 0 {
		return usagef("--log-grace must be positive, got %s", cfg.LogGrace)
	}
	defer memlimit.Start(floor)()
	n, err := startNode(ctx, e, cfg, e.stdout)
	if err != nil {
		return err
	}
	return n.run(ctx)
}

func defaultDataDir(e *env) string {
	if home := e.getenv("HOME"); home != "" {
		return filepath.Join(home, ".surety")
	}
	return ".surety"
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("--log-format %q: want text or json", format)
}

func readDeployment(path string) (*contracts.Deployment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read deployment: %w", err)
	}
	d, err := contracts.ParseDeployment(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// node is a started node: everything is open and the API is ready to serve.
type node struct {
	cfg        nodeConfig
	index      *escrow.Indexer
	stakes     *stake.Index
	missed     []string // DIDs whose records changed during the start-up catch-up
	reputation *reputation.Service
	p2p        *p2p.Node
	cardNet    *registry.Network // the registry's side of the network (its DHT puts)
	p2pCtx     context.Context
	p2pStop    context.CancelFunc
	seeds      []peer.AddrInfo // bootstrap and remembered peers, redialled when alone
	syncer     *p2p.Syncer
	// register makes the node's DID a staked node on chain (startup.registerNode); nil when
	// the node does not.
	register func(context.Context) error
	ln       net.Listener
	db       *sql.DB
	lock     *os.File
	chain    chain.Client
	api      *api.Server
	closed   bool
}

// startup carries what one phase of startNode opened to the phases after it.
type startup struct {
	*node
	e       *env
	out     io.Writer
	log     *slog.Logger
	started time.Time

	dep        *contracts.Deployment
	kind       string // embedded or rpc
	id         chain.Identity
	key        string // the chain state key
	named      []contracts.NamedAddress
	chainRow   int64
	pass       []byte
	stakeToken units.Token
	minStake   *big.Int

	ids     *identity.Service
	threads *groups.Service
	keys    *identity.Store
	agents  *registry.Registry

	txs      *txn.Service
	bounties *escrow.Service
	staking  *stake.Service
	auditLog *reputation.Log
}

// startNode opens everything a node needs, in the order that fails fastest and cheapest, and
// undoes what it opened when a later step fails. Start-up failures are startErrors.
func startNode(ctx context.Context, e *env, cfg nodeConfig, out io.Writer) (_ *node, err error) {
	st := &startup{node: &node{cfg: cfg}, e: e, out: out, log: cfg.Logger, started: time.Now()}
	defer func() {
		if err != nil {
			st.close()
			err = startError{err}
		}
	}()
	for _, phase := range []func(context.Context) error{
		st.listen,       // the data dir and the API port: the cheapest to find taken
		st.connectChain, // the embedded chain, or --rpc-url checked against --deployment
		st.openState,    // SQLite, scoped to this chain; the passphrase
		st.followChain,  // the stake and escrow indexes, identity, the registry, caught up
		st.joinNetwork,  // libp2p, gossip, anti-entropy
		st.openWallets,  // the transaction service and the wallets the node holds
		st.startScoring, // the audit store and log, reputation
		st.serve,        // the API
	} {
		if err := phase(ctx); err != nil {
			return nil, err
		}
	}
	return st.node, nil
}

// listen refuses an exposed API without a safe passphrase source, locks the data dir and
// takes the API port, before anything slower.
func (st *startup) listen(context.Context) (err error) {
	cfg := st.cfg
	// The chain's side of exposure is checked once it answers (openState).
	if err := checkPassphraseSource(st.e, cfg.PassphraseFile, cfg.DataDir, exposure(cfg.Listen, "embedded", chain.EmbeddedChainID)); err != nil {
		return err
	}
	if st.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return err
	}
	if st.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err // "listen tcp 127.0.0.1:7746:" would repeat the address
		}
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	return nil
}

// connectChain starts the embedded chain, or dials --rpc-url and checks --deployment against it.
func (st *startup) connectChain(ctx context.Context) (err error) {
	cfg := st.cfg
	if cfg.RPC == "" {
		st.kind = "embedded"
		st.chain, st.dep, err = startEmbedded(ctx, cfg, st.out)
		return err
	}
	st.kind = "rpc"
	c, err := chain.Dial(ctx, cfg.RPC, cfg.RPCTimeout)
	if err != nil {
		return err
	}
	st.chain = c
	if cfg.Deployment == nil {
		return fmt.Errorf("--rpc-url %s needs --deployment FILE (write one with 'surety deploy --rpc-url %s')", cfg.RPC, cfg.RPC)
	}
	st.dep = cfg.Deployment
	if err := st.dep.Check(ctx, c); err != nil {
		return fmt.Errorf("rpc %s: %w", cfg.RPC, err)
	}
	return nil
}

// openState opens SQLite and enters this chain's state (chain id, genesis, contracts), then
// reads the passphrase, now that the chain says how exposed the node is.
func (st *startup) openState(ctx context.Context) (err error) {
	cfg := st.cfg
	if st.id, err = chain.Identify(ctx, st.chain); err != nil {
		return err
	}
	if !cfg.ConfirmationsGiven && !devChain(st.kind, st.id.ChainID.Uint64()) {
		st.cfg.Confirmations = publicConfirmations
		st.log.Info("waiting for confirmations before trusting events (--confirmations)", "blocks", publicConfirmations)
	}
	st.key = chain.Key(st.id, st.dep.Contracts.List())
	if st.db, err = sqlite.Open(filepath.Join(cfg.DataDir, "surety.db")); err != nil {
		return err
	}
	st.named = st.dep.Contracts.Named()
	st.chainRow, err = sqlite.EnterChain(ctx, st.db, sqlite.Chain{
		Key: st.key, ChainID: st.id.ChainID.Uint64(), Genesis: st.id.Genesis.Hex(),
		Contracts: contractsText(st.named), Ephemeral: st.kind == "embedded",
	})
	if err != nil {
		return err
	}
	st.pass, err = loadPassphrase(st.e, cfg.PassphraseFile, cfg.DataDir, exposure(cfg.Listen, st.kind, st.id.ChainID.Uint64()), st.log)
	return err
}

// followChain opens the chain's indexes and what reads them (identity, the registry), and
// catches up with the chain before anything is served.
func (st *startup) followChain(ctx context.Context) (err error) {
	cfg, dep, log := st.cfg, st.dep, st.log
	chainID := st.id.ChainID.Uint64()
	// Who may act is the chain's to say: every check of a DID's key, binding and stake reads
	// this index of StakeRegistry, which every node builds the same way from the same blocks.
	if _, st.stakeToken, err = dep.StakeToken(ctx, st.chain); err != nil {
		return err
	}
	st.stakes, err = stake.NewIndex(ctx, stake.Config{DB: st.db, Chain: st.chainRow, Client: st.chain, ChainID: chainID,
		Registry: dep.Contracts.StakeRegistry, StartBlock: dep.Block, Confirmations: cfg.Confirmations, Token: st.stakeToken, Logger: log})
	if err != nil {
		return err
	}
	st.index, err = escrow.NewIndexer(ctx, escrow.IndexerConfig{DB: st.db, Chain: st.chainRow, Client: st.chain,
		Escrow: dep.Contracts.BountyEscrow, StartBlock: dep.Block, Confirmations: cfg.Confirmations, Logger: log})
	if err != nil {
		return err
	}
	gate := groupGate{bounties: st.index, stakes: st.stakes}
	st.ids, st.threads, st.keys, err = startIdentity(ctx, st.db, identityConfig{passphrase: st.pass, kdf: cfg.KDF, started: st.started,
		chainID: chainID, registry: dep.Contracts.StakeRegistry, keys: st.stakes,
		mayCreate: gate.mayCreate, bound: gate.bound}, log)
	if err != nil {
		return err
	}
	// The minimum stake is the deployment's, read from the chain: a node-local value would let
	// two nodes of one network rank and score the same agents differently.
	if st.minStake, err = dep.MinStake(ctx, st.chain); err != nil {
		return err
	}
	st.agents, err = registry.New(ctx, registry.Config{DB: st.db, Chain: st.chainRow, Stakes: st.stakes, Keys: st.stakes, MinStake: st.minStake,
		StakeToken: st.stakeToken, Logger: log})
	if err != nil {
		return err
	}
	n := st.node
	agents := st.agents
	st.stakes.Watch(func(ctx context.Context, changes []stake.Change) {
		dids := make([]string, len(changes))
		for i, c := range changes {
			dids[i] = c.DID
		}
		agents.ChainChanged(ctx, dids)
		if n.reputation == nil { // the catch-up below runs before the reputation service exists
			n.missed = append(n.missed, dids...)
			return
		}
		if err := n.reputation.Recheck(ctx, dids, nil); err != nil && ctx.Err() == nil {
			log.Warn("reputation: recheck after stake changes", "err", err)
		}
	})
	// Catch up with the chain before serving: a DID revoked while the node was down has its
	// card dropped here, by the watcher above.
	if _, err := st.stakes.Sync(ctx); err != nil {
		return fmt.Errorf("index the stake registry: %w", err)
	}
	return nil
}

// joinNetwork starts libp2p (its key kept with the node's keys), gossip of cards, and
// anti-entropy of cards and group threads.
func (st *startup) joinNetwork(ctx context.Context) error {
	cfg, log := st.cfg, st.log
	peerKey, err := loadPeerKey(cfg.DataDir, st.keys)
	if err != nil {
		return err
	}
	boot, err := p2p.ParseAddrs(cfg.Bootstrap)
	if err != nil {
		return err
	}
	self, err := peer.IDFromPrivateKey(peerKey)
	if err != nil {
		return err
	}
	st.seeds = withKnownPeers(boot, loadKnownPeers(cfg.DataDir, log), self)
	st.p2pCtx, st.p2pStop = context.WithCancel(context.WithoutCancel(ctx))
	st.p2p, err = p2p.Start(st.p2pCtx, p2p.Config{Key: peerKey, Listen: cfg.P2PListen, Bootstrap: st.seeds,
		Validators: st.agents.DHTValidators(), Topics: []string{registry.CardTopic, reputation.AuditTopic, groups.Topic}, Logger: log})
	if err != nil {
		return err
	}
	if st.cardNet, err = st.agents.Attach(st.p2pCtx, st.p2p, log); err != nil {
		return err
	}
	// Anti-entropy: what gossip did not deliver (the node was down, or cut off) is pulled from
	// peers, set by set in this order, each item checked as gossip would check it.
	// A node with peers to find is synced once one answered (or after a few rounds): a
	// restart that reached nobody at once must not close log epochs on its own.
	waitForPeer := 0
	if len(st.seeds) > 0 {
		waitForPeer = syncWaitForPeer
	}
	st.syncer = p2p.NewSyncer(st.p2p, p2p.SyncConfig{Every: cfg.SyncEvery, WaitForPeer: waitForPeer, Logger: log})
	st.syncer.AddSet(registry.CardSet, st.agents.SyncSet())
	members, posts := st.threads.SyncSets(st.ids.CheckArchived)
	st.syncer.AddSet(groups.MembersSet, members)
	st.syncer.AddSet(groups.PostsSet, posts)
	return nil
}

// openWallets opens the transaction service, the one way the node sends (one nonce order
// per wallet, the idempotent request store), with the wallets the node holds, and the bounty
// and stake services over it.
func (st *startup) openWallets(ctx context.Context) (err error) {
	cfg, dep, log := st.cfg, st.dep, st.log
	if st.txs, err = txn.New(ctx, txn.Config{DB: st.db, Chain: st.chainRow, Client: st.chain}); err != nil {
		return err
	}
	st.bounties = escrow.NewService(escrow.ServiceConfig{Tx: st.txs, Chain: st.chain, Escrow: dep.Contracts.BountyEscrow, Indexer: st.index})
	st.staking = stake.NewService(stake.ServiceConfig{Tx: st.txs, Chain: st.chain, Registry: dep.Contracts.StakeRegistry, Index: st.stakes})
	held, err := loadWallets(walletDir(cfg.DataDir), st.pass)
	if err != nil {
		return err
	}
	for _, k := range held {
		if _, err := st.txs.AddKey(ctx, k); err != nil {
			return err
		}
	}
	if len(held) > 0 {
		log.Info("holding wallets", "count", len(held), "dir", walletDir(cfg.DataDir))
		if !devChain(st.kind, st.id.ChainID.Uint64()) {
			// Anyone who takes the node (its disk and passphrase) takes these wallets' funds.
			log.Warn("the node holds wallets on a public chain: whoever takes the node takes their funds; users can keep their own keys and send with --keystore, --private-key or --signer",
				"count", len(held), "chain", st.id.ChainID)
		}
	}
	if st.kind == "embedded" || cfg.DevWallets {
		// Dev accounts' keys are public: the node may act for them on dev chains.
		for i := range cfg.DevAccounts {
			if _, err := st.txs.AddKey(ctx, chain.DevKey(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// startScoring opens the audit store and the log (anchored from a wallet the node holds),
// starts reputation, and wires the chain's changes and the network into it.
func (st *startup) startScoring(ctx context.Context) error {
	cfg, dep, log := st.cfg, st.dep, st.log
	audits, err := reputation.OpenStore(ctx, st.db, st.chainRow)
	if err != nil {
		return err
	}
	st.auditLog, err = reputation.OpenLog(ctx, st.db, st.chainRow, reputation.LogConfig{Epoch: cfg.LogEpoch, Grace: cfg.LogGrace, Signer: st.ids})
	if err != nil {
		return err
	}
	anchorer, err := anchorFor(cfg, st.kind, st.txs, dep, log)
	if err != nil {
		return err
	}
	if st.node.register, err = st.registerNode(anchorer); err != nil {
		return err
	}
	n := st.node
	st.reputation = reputation.NewService(reputation.ServiceConfig{Store: audits, Log: st.auditLog, Anchorer: anchorer, Stakes: st.stakes, Logger: log,
		Ready: st.syncer.Synced(), Clock: cfg.ScoreStep,
		Nodes: stakedNodes{stakes: st.stakes, min: st.minStake}, Quorum: cfg.LogQuorum,
		Anchors: chainAnchors{chain: st.chain, contract: dep.Contracts.RootAnchor, abi: contracts.NewRootAnchor()},
		Params:  reputation.Params{MinStake: minStakeWhole(st.minStake, st.stakeToken)},
		CatchUp: func(ctx context.Context) error {
			if err := n.stakes.CatchUp(ctx); err != nil {
				return err
			}
			return n.index.CatchUp(ctx)
		},
		Rules: &reputation.Rules{ChainID: st.id.ChainID.Uint64(), Escrow: dep.Contracts.BountyEscrow,
			Bounties: escrowFacts{st.index}, Wallets: st.stakes, Agents: knownAgents{st.agents, st.stakes}}})
	// Bindings that changed while the node was down weigh the audits from now on.
	if err := st.reputation.Recheck(ctx, st.missed, nil); err != nil {
		return fmt.Errorf("reputation: recheck after catching up with the chain: %w", err)
	}
	st.missed = nil
	st.agents.UseReputation(st.reputation) // ranks by it, and tells it when stakes change
	// A settlement indexed after the audits that name it backs them from then on.
	st.index.Watch(func(ctx context.Context, events []escrow.Event) {
		var ended []uint64
		for _, ev := range events {
			if ev.HasBounty && escrow.EndsBounty(ev.Name) {
				ended = append(ended, ev.BountyID)
			}
		}
		if len(ended) == 0 {
			return
		}
		if err := n.reputation.Recheck(ctx, nil, ended); err != nil && ctx.Err() == nil {
			log.Warn("reputation: recheck after settlements", "err", err)
		}
	})
	if err := st.reputation.Attach(st.p2p, st.ids.VerifyEnvelope, log); err != nil {
		return err
	}
	st.reputation.AttachSync(st.syncer, st.ids.CheckArchived)
	return st.threads.Attach(st.p2p)
}

// serve builds the API over everything above and says the node is ready.
func (st *startup) serve(ctx context.Context) error {
	cfg, log := st.cfg, st.log
	peerBinding, err := st.ids.SignAsNode(peerBindingPayload(st.ids.NodeDID(), st.p2p.Host.ID().String()), "surety-peer+jws")
	if err != nil {
		return err
	}
	info := api.ChainInfo{ID: st.id.ChainID.Uint64(), Genesis: st.id.Genesis, Kind: st.kind, Key: st.key, MinStake: st.minStake, Confirmations: st.cfg.Confirmations}
	for _, c := range st.named {
		info.Contracts = append(info.Contracts, api.Contract{Name: c.Name, Address: c.Address})
	}
	st.api, err = api.New(api.Config{Version: version, Chain: info, Blocks: st.chain, DB: st.db, Operations: st.db, OperationsChain: st.chainRow, Identity: st.ids,
		Bounties: st.bounties, Staking: st.staking, Senders: st.txs, Wallets: st.ids, Stakes: st.stakes, Indexes: []api.Index{st.index, st.stakes}, ChainRPC: st.chain, Agents: st.agents,
		Reputation: st.reputation, Groups: st.threads, AuditLog: st.auditLog, Peers: peersOf{st.p2p, st.cardNet}, PeerBinding: peerBinding, Logger: log,
		TrustedProxies: cfg.TrustedProxies, RequestTimeout: requestTimeout(cfg.RequestTimeout, st.kind)})
	if err != nil {
		return err
	}
	head, err := st.chain.BlockNumber(ctx)
	if err != nil {
		return fmt.Errorf("read block number: %w", err)
	}
	log.Info("node ready", "api", "http://"+st.ln.Addr().String(), "chain", st.id.ChainID, "kind", st.kind,
		"block", head, "state", st.key, "did", st.ids.NodeDID(), "data", cfg.DataDir)
	fmt.Fprintf(st.out, "Surety node ready on http://%s (chain %s, %s, block %d)\n  node DID %s\n  peer %s\n  try: curl -s http://%s/v1/info\n",
		st.ln.Addr(), st.id.ChainID, st.kind, head, st.ids.NodeDID(), st.p2p.Addrs()[0], st.ln.Addr())
	return nil
}

// startEmbedded starts the in-process chain, deploys the contracts from dev account 0, and
// prints the dev accounts.
func startEmbedded(ctx context.Context, cfg nodeConfig, out io.Writer) (chain.Client, *contracts.Deployment, error) {
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(cfg.DevAccounts, chain.DefaultDevBalance)})
	if err != nil {
		return nil, nil, err
	}
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{FeeBps: contracts.DefaultFeeBps, MinStake: cfg.MinStake}, func(name string, addr common.Address) {
		cfg.Logger.Info("deployed contract", "name", name, "address", addr)
	})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	fmt.Fprintf(out, "Embedded chain %d: %d dev accounts with 10000 ETH each.\n", chain.EmbeddedChainID, cfg.DevAccounts)
	fmt.Fprintln(out, "They are Anvil's test accounts (mnemonic \"test test ... junk\"), public keys: never send real funds to them.")
	for i := range cfg.DevAccounts {
		k := chain.DevKey(i)
		fmt.Fprintf(out, "  (%d) %s  key %s\n", i, crypto.PubkeyToAddress(k.PublicKey), hexutil.Encode(crypto.FromECDSA(k)))
	}
	return c, dep, nil
}

func contractsText(named []contracts.NamedAddress) string {
	parts := make([]string, len(named))
	for i, c := range named {
		parts[i] = fmt.Sprintf("%q:%q", c.Name, c.Address.Hex())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// lockDataDir creates dir and takes an exclusive lock on dir/LOCK, so two nodes never share
// one database (they would drop each other's embedded-chain state).
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another surety process", dir)
	}
	return f, nil
}

// run serves the API until ctx ends, then shuts down and closes everything.
func (n *node) run(ctx context.Context) error {
	defer n.close()
	ictx, stopIndex := context.WithCancel(ctx)
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		_ = n.index.Run(ictx)
	}()
	staked := make(chan struct{})
	go func() {
		defer close(staked)
		_ = n.stakes.Run(ictx)
	}()
	scored := make(chan struct{})
	go func() {
		defer close(scored)
		_ = n.reputation.Run(ictx)
	}()
	peersKept := make(chan struct{})
	go func() {
		defer close(peersKept)
		n.keepKnownPeers(ictx) // saves once more when ictx ends, before the host closes
	}()
	rejoined := make(chan struct{})
	go func() {
		defer close(rejoined)
		n.p2p.Rejoin(ictx, p2p.RejoinConfig{Seeds: n.seeds, Logger: n.cfg.Logger})
	}()
	synced := make(chan struct{})
	go func() {
		defer close(synced)
		n.syncer.Run(ictx)
	}()
	denying := make(chan struct{})
	go func() {
		defer close(denying)
		if n.cfg.DenyFile != "" {
			n.keepDenying(ictx)
		}
	}()
	registered := make(chan struct{})
	go func() {
		defer close(registered)
		n.registerOnChain(ictx)
	}()
	err := n.api.Serve(ctx, n.ln, 10*time.Second)
	stopIndex()
	<-rejoined
	<-synced
	<-denying
	<-registered
	<-indexed
	<-staked
	<-scored
	<-peersKept
	n.cfg.Logger.Info("node stopped")
	return err
}

func (n *node) close() {
	if n.closed {
		return
	}
	n.closed = true
	if n.ln != nil {
		n.ln.Close()
	}
	if n.p2p != nil {
		n.p2pStop()
		n.p2p.Close()
	}
	if n.chain != nil {
		n.chain.Close()
	}
	if n.db != nil {
		n.db.Close()
	}
	if n.lock != nil {
		n.lock.Close()
	}
}

// The registry tells the reputation service when stakes change, through this interface.
var _ registry.StakeWatcher = (*reputation.Service)(nil)

// requestTimeout is how long a request may take: as given, else 30 s on the embedded chain
// (a block per transaction, at once) and 5 min on any other (an Anvil may mine every 12 s,
// and a write may need a bind, its own transaction and some confirmations).
func requestTimeout(given time.Duration, kind string) time.Duration {
	switch {
	case given > 0:
		return given
	case kind == "embedded":
		return 30 * time.Second
	}
	return 5 * time.Minute
}

// devChain says a chain is for development: the embedded one, or a devnet's chain id.
func devChain(kind string, chainID uint64) bool {
	return kind == "embedded" || devnetChains[chainID]
}

// publicConfirmations is how many blocks the indexes wait on a chain that is not a devnet,
// unless --confirmations says otherwise.
const publicConfirmations = 2

// devnetChains are the chain ids of development chains: the embedded chain and Anvil's
// default. Keys for them may be kept under a generated passphrase.
var devnetChains = map[uint64]bool{chain.EmbeddedChainID: true, 31337: true}

// exposure says how a node is exposed, if it is: its API listens beyond loopback, or it settles
// on a chain that is not a devnet. Such a node must be given its keys' passphrase.
func exposure(listen, kind string, chainID uint64) string {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return "" // not an address at all: listening on it fails and says why
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Sprintf("listens on %s, beyond loopback", listen)
	}
	if !devChain(kind, chainID) {
		return fmt.Sprintf("settles on chain %d, which is not a devnet", chainID)
	}
	return ""
}

// minStakeWhole is a minimum stake in whole tokens, as reputation.Params takes it (negative:
// no minimum).
func minStakeWhole(base *big.Int, token units.Token) float64 {
	if base.Sign() == 0 {
		return -1
	}
	return token.Whole(base)
}
