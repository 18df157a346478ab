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
const syncWaitForPeer = 3

// nodeConfig is everything `surety node` needs, gathered from flags and files.
type nodeConfig struct {
	DataDir string
	Listen  string
	// RPC is the external chain's URL; empty runs the embedded chain.
	RPC string
	// Deployment says where the contracts are on the RPC chain.
	Deployment  *contracts.Deployment
	DevAccounts int
	RPCTimeout  time.Duration
	LogEpoch    time.Duration
	LogGrace    time.Duration
	// AnchorWallet anchors the audit log on chain; empty: dev account 0 where the node holds
	// the dev wallets, else no anchoring.
	AnchorWallet string
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
	// DevWallets makes the node hold the dev accounts' wallets on an --rpc chain too (the
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

With no --rpc the node runs an embedded in-process chain (chain id 1337) with funded dev
accounts, whose keys it prints, and deploys every contract at start. The embedded chain's
state ends with the process. With --rpc URL --deployment FILE it uses an external chain such
as Anvil (see 'surety deploy' and 'surety devnet').`))
	cfg := nodeConfig{}
	fs.StringVar(&cfg.DataDir, "data-dir", defaultDataDir(e), "directory for the node's database and keys")
	fs.StringVar(&cfg.Listen, "listen", defaultListen, "address of the HTTP API")
	fs.StringVar(&cfg.RPC, "rpc", "", "JSON-RPC URL of an external chain (default: the embedded chain)")
	deployment := fs.String("deployment", "", "deployment file naming the contract addresses on the --rpc chain")
	fs.IntVar(&cfg.DevAccounts, "dev-accounts", 10, "funded dev accounts on the embedded chain")
	fs.DurationVar(&cfg.RPCTimeout, "rpc-timeout", defaultRPCTimeout, "how long to wait for the --rpc chain to answer at start")
	fs.DurationVar(&cfg.LogEpoch, "log-epoch", time.Hour, "how much audit time one append to the audit log covers (whole seconds)")
	fs.StringVar(&cfg.AnchorWallet, "anchor-wallet", "", "a wallet the node holds that anchors the audit log's heads on chain (default: dev account 0 on dev chains; none elsewhere)")
	fs.DurationVar(&cfg.LogGrace, "log-grace", 15*time.Minute, "how long after its end an epoch of the audit log closes; keep it above the envelope lifetime (10m) plus skew, or late audits are refused")
	fs.Uint64Var(&cfg.Confirmations, "confirmations", 0, "blocks the escrow index waits before trusting an event (raise it on public chains)")
	fs.BoolVar(&cfg.DevWallets, "dev-wallets", false, "hold the public dev accounts' wallets on the --rpc chain (devnets only)")
	p2pListen := fs.String("p2p-listen", strings.Join(p2p.DefaultListen, ","), "libp2p listen multiaddrs, comma-separated")
	bootstrap := fs.String("bootstrap", "", "peers to join the network through: multiaddrs with /p2p/<id>, comma-separated")
	fs.DurationVar(&cfg.SyncEvery, "sync-every", 10*time.Second, "how often the node pulls from peers the cards, group envelopes, audits and log epochs gossip did not bring it")
	fs.StringVar(&cfg.DenyFile, "p2p-deny", "", "file of peer ids (whitespace- or comma-separated) the node refuses to connect to; reread when it changes")
	fs.DurationVar(&cfg.ScoreStep, "score-step", 0, "scores are computed as of the start of each step of this length, the same instant on every node (default: --log-epoch)")
	fs.StringVar(&cfg.PassphraseFile, "passphrase-file", "", "file holding the passphrase that encrypts the node's keys (default: $"+passphraseEnv+", else one generated in --data-dir)")
	minStake := fs.String("min-stake", "", "embedded chain only: the minimum stake its deployment fixes (default 0.1eth); elsewhere StakeRegistry.minStake rules")
	trustedProxy := fs.String("trusted-proxy", "", "proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For names the client; without it the client is the socket's peer")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	if err := fs.parse(args); err != nil {
		return err
	}
	logger, err := newLogger(e.stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	if *minStake != "" {
		if cfg.RPC != "" {
			return usagef("--min-stake is for the embedded chain: on --rpc the deployment's StakeRegistry fixes it (surety deploy --min-stake)")
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
			return usagef("--deployment needs --rpc: the embedded chain deploys its own contracts")
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
	if cfg.LogGrace <= 0 {
		return usagef("--log-grace must be positive, got %s", cfg.LogGrace)
	}
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
	p2pCtx     context.Context
	p2pStop    context.CancelFunc
	seeds      []peer.AddrInfo // bootstrap and remembered peers, redialled when alone
	syncer     *p2p.Syncer
	ln         net.Listener
	db         *sql.DB
	lock       *os.File
	chain      chain.Client
	api        *api.Server
	closed     bool
}

// startNode opens everything a node needs, in the order that fails fastest and cheapest, and
// undoes what it opened when a later step fails. Start-up failures are startErrors.
func startNode(ctx context.Context, e *env, cfg nodeConfig, out io.Writer) (_ *node, err error) {
	log := cfg.Logger
	started := time.Now()
	n := &node{cfg: cfg}
	defer func() {
		if err != nil {
			n.close()
			err = startError{err}
		}
	}()

	// Refuse an exposed API before it listens (the chain's side is checked once it answers).
	if err := checkPassphraseSource(e, cfg.PassphraseFile, cfg.DataDir, exposure(cfg.Listen, "embedded", chain.EmbeddedChainID)); err != nil {
		return nil, err
	}
	if n.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return nil, err
	}
	if n.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err // "listen tcp 127.0.0.1:7746:" would repeat the address
		}
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}

	var dep *contracts.Deployment
	kind := "rpc"
	if cfg.RPC == "" {
		kind = "embedded"
		if n.chain, dep, err = startEmbedded(ctx, cfg, out); err != nil {
			return nil, err
		}
	} else {
		c, err := chain.Dial(ctx, cfg.RPC, cfg.RPCTimeout)
		if err != nil {
			return nil, err
		}
		n.chain = c
		if cfg.Deployment == nil {
			return nil, fmt.Errorf("--rpc %s needs --deployment FILE (write one with 'surety deploy --rpc %s')", cfg.RPC, cfg.RPC)
		}
		dep = cfg.Deployment
		if err := dep.Check(ctx, c); err != nil {
			return nil, fmt.Errorf("rpc %s: %w", cfg.RPC, err)
		}
	}

	id, err := chain.Identify(ctx, n.chain)
	if err != nil {
		return nil, err
	}
	key := chain.Key(id, dep.Contracts.List())
	n.db, err = sqlite.Open(filepath.Join(cfg.DataDir, "surety.db"))
	if err != nil {
		return nil, err
	}
	named := dep.Contracts.Named()
	chainRow, err := sqlite.EnterChain(ctx, n.db, sqlite.Chain{
		Key: key, ChainID: id.ChainID.Uint64(), Genesis: id.Genesis.Hex(),
		Contracts: contractsText(named), Ephemeral: kind == "embedded",
	})
	if err != nil {
		return nil, err
	}

	pass, err := loadPassphrase(e, cfg.PassphraseFile, cfg.DataDir, exposure(cfg.Listen, kind, id.ChainID.Uint64()), log)
	if err != nil {
		return nil, err
	}
	// Who may act is the chain's to say: every check of a DID's key, binding and stake reads
	// this index of StakeRegistry, which every node builds the same way from the same blocks.
	_, stakeToken, err := dep.StakeToken(ctx, n.chain)
	if err != nil {
		return nil, err
	}
	n.stakes, err = stake.NewIndex(ctx, stake.Config{DB: n.db, Chain: chainRow, Client: n.chain, ChainID: id.ChainID.Uint64(),
		Registry: dep.Contracts.StakeRegistry, StartBlock: dep.Block, Confirmations: cfg.Confirmations, Token: stakeToken, Logger: log})
	if err != nil {
		return nil, err
	}
	n.index, err = escrow.NewIndexer(ctx, escrow.IndexerConfig{DB: n.db, Chain: chainRow, Client: n.chain,
		Escrow: dep.Contracts.BountyEscrow, StartBlock: dep.Block, Confirmations: cfg.Confirmations, Logger: log})
	if err != nil {
		return nil, err
	}
	ids, threads, keys, err := startIdentity(ctx, n.db, identityConfig{passphrase: pass, kdf: cfg.KDF, started: started,
		chainID: id.ChainID.Uint64(), registry: dep.Contracts.StakeRegistry, keys: n.stakes,
		mayCreate: groupGate{bounties: n.index, stakes: n.stakes}.mayCreate}, log)
	if err != nil {
		return nil, err
	}
	// The minimum stake is the deployment's, read from the chain: a node-local value would let
	// two nodes of one network rank and score the same agents differently.
	minStake, err := dep.MinStake(ctx, n.chain)
	if err != nil {
		return nil, err
	}
	agents, err := registry.New(ctx, registry.Config{DB: n.db, Chain: chainRow, Stakes: n.stakes, Keys: n.stakes, MinStake: minStake,
		StakeToken: stakeToken, Logger: log})
	if err != nil {
		return nil, err
	}
	n.stakes.Watch(func(ctx context.Context, changes []stake.Change) {
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
	if _, err := n.stakes.Sync(ctx); err != nil {
		return nil, fmt.Errorf("index the stake registry: %w", err)
	}
	peerKey, err := loadPeerKey(cfg.DataDir, keys)
	if err != nil {
		return nil, err
	}
	boot, err := p2p.ParseAddrs(cfg.Bootstrap)
	if err != nil {
		return nil, err
	}
	self, err := peer.IDFromPrivateKey(peerKey)
	if err != nil {
		return nil, err
	}
	boot = withKnownPeers(boot, loadKnownPeers(cfg.DataDir, log), self)
	n.seeds = boot
	n.p2pCtx, n.p2pStop = context.WithCancel(context.WithoutCancel(ctx))
	n.p2p, err = p2p.Start(n.p2pCtx, p2p.Config{Key: peerKey, Listen: cfg.P2PListen, Bootstrap: boot,
		Validators: agents.DHTValidators(), Topics: []string{registry.CardTopic, reputation.AuditTopic, groups.Topic}, Logger: log})
	if err != nil {
		return nil, err
	}
	if _, err := agents.Attach(n.p2pCtx, n.p2p, log); err != nil {
		return nil, err
	}
	// Anti-entropy: what gossip did not deliver (the node was down, or cut off) is pulled from
	// peers, set by set in this order, each item checked as gossip would check it.
	// A node with peers to find is synced once one answered (or after a few rounds): a
	// restart that reached nobody at once must not close log epochs on its own.
	waitForPeer := 0
	if len(n.seeds) > 0 {
		waitForPeer = syncWaitForPeer
	}
	n.syncer = p2p.NewSyncer(n.p2p, p2p.SyncConfig{Every: cfg.SyncEvery, WaitForPeer: waitForPeer, Logger: log})
	n.syncer.AddSet(registry.CardSet, agents.SyncSet())
	members, posts := threads.SyncSets(ids.CheckArchived)
	n.syncer.AddSet(groups.MembersSet, members)
	n.syncer.AddSet(groups.PostsSet, posts)
	peerBinding, err := ids.SignAsNode(peerBindingPayload(ids.NodeDID(), n.p2p.Host.ID().String()), "surety-peer+jws")
	if err != nil {
		return nil, err
	}
	// Every transaction the node sends goes through one service: one nonce order per wallet,
	// and the idempotent request store.
	txs, err := txn.New(ctx, txn.Config{DB: n.db, Chain: chainRow, Client: n.chain})
	if err != nil {
		return nil, err
	}
	bounties := escrow.NewService(escrow.ServiceConfig{Tx: txs, Chain: n.chain, Escrow: dep.Contracts.BountyEscrow, Indexer: n.index})
	staking := stake.NewService(stake.ServiceConfig{Tx: txs, Chain: n.chain, Registry: dep.Contracts.StakeRegistry, Index: n.stakes})
	held, err := loadWallets(walletDir(cfg.DataDir), pass)
	if err != nil {
		return nil, err
	}
	for _, k := range held {
		if _, err := txs.AddKey(ctx, k); err != nil {
			return nil, err
		}
	}
	if len(held) > 0 {
		log.Info("holding wallets", "count", len(held), "dir", walletDir(cfg.DataDir))
	}
	if kind == "embedded" || cfg.DevWallets {
		// Dev accounts' keys are public: the node may act for them on dev chains.
		for i := range cfg.DevAccounts {
			if _, err := txs.AddKey(ctx, chain.DevKey(i)); err != nil {
				return nil, err
			}
		}
	}

	audits, err := reputation.OpenStore(ctx, n.db, chainRow)
	if err != nil {
		return nil, err
	}
	auditLog, err := reputation.OpenLog(ctx, n.db, chainRow, reputation.LogConfig{Epoch: cfg.LogEpoch, Grace: cfg.LogGrace, Signer: ids})
	if err != nil {
		return nil, err
	}
	anchorer, err := anchorFor(cfg, kind, txs, dep, log)
	if err != nil {
		return nil, err
	}
	n.reputation = reputation.NewService(reputation.ServiceConfig{Store: audits, Log: auditLog, Anchorer: anchorer, Stakes: n.stakes, Logger: log,
		Ready: n.syncer.Synced(), Clock: cfg.ScoreStep,
		Params: reputation.Params{MinStake: minStakeWhole(minStake, stakeToken)},
		CatchUp: func(ctx context.Context) error {
			if err := n.stakes.CatchUp(ctx); err != nil {
				return err
			}
			return n.index.CatchUp(ctx)
		},
		Rules: &reputation.Rules{ChainID: id.ChainID.Uint64(), Escrow: dep.Contracts.BountyEscrow,
			Bounties: escrowFacts{n.index}, Wallets: n.stakes, Agents: knownAgents{agents, n.stakes}}})
	// Bindings that changed while the node was down weigh the audits from now on.
	if err := n.reputation.Recheck(ctx, n.missed, nil); err != nil {
		return nil, fmt.Errorf("reputation: recheck after catching up with the chain: %w", err)
	}
	n.missed = nil
	agents.UseReputation(n.reputation) // ranks by it, and tells it when stakes change
	// A settlement indexed after the audits that name it backs them from then on.
	n.index.Watch(func(ctx context.Context, events []escrow.Event) {
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
	if err := n.reputation.Attach(n.p2p, ids.VerifyEnvelope, log); err != nil {
		return nil, err
	}
	n.reputation.AttachSync(n.syncer, ids.CheckArchived)
	if err := threads.Attach(n.p2p); err != nil {
		return nil, err
	}
	info := api.ChainInfo{ID: id.ChainID.Uint64(), Genesis: id.Genesis, Kind: kind, Key: key, MinStake: minStake}
	for _, c := range named {
		info.Contracts = append(info.Contracts, api.Contract{Name: c.Name, Address: c.Address})
	}
	n.api, err = api.New(api.Config{Version: version, Chain: info, Blocks: n.chain, DB: n.db, Identity: ids,
		Bounties: bounties, Staking: staking, Senders: txs, Wallets: ids, Stakes: n.stakes, Agents: agents, Reputation: n.reputation, Groups: threads, AuditLog: auditLog, Peers: peersOf{n.p2p}, PeerBinding: peerBinding, Logger: log,
		TrustedProxies: cfg.TrustedProxies})
	if err != nil {
		return nil, err
	}
	head, err := n.chain.BlockNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("read block number: %w", err)
	}
	log.Info("node ready", "api", "http://"+n.ln.Addr().String(), "chain", id.ChainID, "kind", kind,
		"block", head, "state", key, "did", ids.NodeDID(), "data", cfg.DataDir)
	fmt.Fprintf(out, "Surety node ready on http://%s (chain %s, %s, block %d)\n  node DID %s\n  peer %s\n  try: curl -s http://%s/v1/info\n",
		n.ln.Addr(), id.ChainID, kind, head, ids.NodeDID(), n.p2p.Addrs()[0], n.ln.Addr())
	return n, nil
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
	fmt.Fprintln(out, "These keys are public test keys: never send real funds to them.")
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
	err := n.api.Serve(ctx, n.ln, 10*time.Second)
	stopIndex()
	<-rejoined
	<-synced
	<-denying
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
	if kind != "embedded" && !devnetChains[chainID] {
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
