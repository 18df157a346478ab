package node

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/sync/errgroup"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/auditor"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/explorer"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/units"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/mcp"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/stake"
	"github.com/surety-ioa/surety/txn"
)

// Node is a started node: everything is open and the API is ready to serve (Run).
type Node struct {
	cfg        Config
	index      *escrow.Indexer
	stakes     *stake.Index
	jobIndex   *jobs.Indexer    // nil when the deployment has no JobEscrow
	erc8004    *erc8004.Indexer // nil when the deployment has no ERC-8004 registries
	missed     []string         // DIDs whose records changed during the start-up catch-up
	reputation *reputation.Service
	scorer     *auditor.Scorer // nil without RootAnchor
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
	// closers undo what New opened, in the order it opened them; Close runs them backwards.
	closers []func()
	closed  sync.Once
}

// startup carries what one phase of New opened to the phases after it.
type startup struct {
	*Node
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
	stakeAddr  common.Address // the stake token's address (zero: ETH)
	minStake   *big.Int

	ids     *identity.Service
	threads *groups.Service
	keys    *identity.Store
	agents  *registry.Registry

	txs      *txn.Service
	bounties *escrow.Service
	staking  *stake.Service
	jobs     *jobs.Service    // nil when the deployment has no JobEscrow
	agentIDs *erc8004.Service // ERC-8004 registry calls (the relay of wallets' own); nil without them
	auditLog *reputation.Log
	audits   *reputation.Store
}

// New opens everything a node needs, in the order that fails fastest and cheapest, and
// undoes what it opened when a later step fails. It prints to out (nil: nowhere) what an
// operator needs: the embedded chain's dev accounts and where the node is ready.
func New(ctx context.Context, cfg Config, out io.Writer) (_ *Node, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if out == nil {
		out = io.Discard
	}
	st := &startup{Node: &Node{cfg: cfg}, out: out, log: cfg.Logger, started: time.Now()}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	for _, phase := range []func(context.Context) error{
		st.listen,       // the data dir and the API port: the cheapest to find taken
		st.connectChain, // the embedded chain, or --rpc-url checked against --deployment
		st.openState,    // SQLite, scoped to this chain; the passphrase
		st.followChain,  // the stake, escrow and job indexes, identity, the registry, caught up
		st.joinNetwork,  // libp2p, gossip, anti-entropy
		st.openWallets,  // the transaction service and the wallets the node holds
		st.startScoring, // the audit store and log, reputation
		st.serve,        // the API
	} {
		if err := phase(ctx); err != nil {
			return nil, err
		}
	}
	return st.Node, nil
}

// listen refuses an exposed API without a safe passphrase source, locks the data dir and
// takes the API port, before anything slower.
func (st *startup) listen(context.Context) (err error) {
	cfg := st.cfg
	// The chain's side of exposure is checked once it answers (openState).
	if err := checkPassphraseSource(cfg.PassphraseFile, cfg.Passphrase, cfg.DataDir, exposure(cfg.Listen, "embedded", chain.EmbeddedChainID)); err != nil {
		return err
	}
	if st.lock, err = lockDataDir(cfg.DataDir); err != nil {
		return err
	}
	lock := st.lock
	st.onClose(func() { lock.Close() })
	if st.ln, err = net.Listen("tcp", cfg.Listen); err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err // "listen tcp 127.0.0.1:7746:" would repeat the address
		}
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	ln := st.ln
	st.onClose(func() { ln.Close() })
	return nil
}

// connectChain starts the embedded chain, or dials --rpc-url and checks --deployment against it.
func (st *startup) connectChain(ctx context.Context) (err error) {
	cfg := st.cfg
	if cfg.RPC == "" {
		st.kind = "embedded"
		if st.chain, st.dep, err = startEmbedded(ctx, cfg, st.out); err != nil {
			return err
		}
		st.onClose(st.chain.Close)
		return nil
	}
	st.kind = "rpc"
	c, err := chain.Dial(ctx, cfg.RPC, cfg.RPCTimeout)
	if err != nil {
		return err
	}
	st.chain = c
	st.onClose(c.Close)
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
		st.cfg.Confirmations = PublicConfirmations
		st.log.Info("waiting for confirmations before trusting events (--confirmations)", "blocks", PublicConfirmations)
	}
	st.key = chain.Key(st.id, st.dep.Contracts.List())
	if st.db, err = sqlite.Open(filepath.Join(cfg.DataDir, "surety.db")); err != nil {
		return err
	}
	db := st.db
	st.onClose(func() { db.Close() })
	// Commits append to the WAL; copying it into the database (and syncing) runs beside them.
	st.onClose(sqlite.StartCheckpointer(db, 0, st.log).Close)
	st.named = st.dep.Contracts.Named()
	st.chainRow, err = sqlite.EnterChain(ctx, st.db, sqlite.Chain{
		Key: st.key, ChainID: st.id.ChainID.Uint64(), Genesis: st.id.Genesis.Hex(),
		Contracts: contractsText(st.named), Ephemeral: st.kind == "embedded",
	})
	if err != nil {
		return err
	}
	// The audit store's schema first, before anything writes: a step may rewrite every
	// stored audit, holding the database's write lock while it runs.
	if err := reputation.Migrate(ctx, st.db, st.log); err != nil {
		return err
	}
	st.pass, err = loadPassphrase(cfg.PassphraseFile, cfg.Passphrase, cfg.DataDir, exposure(cfg.Listen, st.kind, st.id.ChainID.Uint64()), st.log)
	return err
}

// followChain opens the chain's indexes and what reads them (identity, the registry), and
// catches up with the chain before anything is served.
func (st *startup) followChain(ctx context.Context) (err error) {
	cfg, dep, log := st.cfg, st.dep, st.log
	chainID := st.id.ChainID.Uint64()
	// Who may act is the chain's to say: every check of a DID's key, binding and stake reads
	// this index of StakeRegistry, which every node builds the same way from the same blocks.
	if st.stakeAddr, st.stakeToken, err = dep.StakeToken(ctx, st.chain); err != nil {
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
	// ERC-8183 jobs (JobEscrow, and SuretyHook's extras): a deployment from before them has
	// no JobEscrow, and the node serves no job routes.
	if dep.Contracts.JobEscrow != (common.Address{}) {
		st.jobIndex, err = jobs.NewIndexer(ctx, jobs.IndexerConfig{DB: st.db, Chain: st.chainRow, Client: st.chain, Caller: st.chain,
			JobEscrow: dep.Contracts.JobEscrow, Hook: dep.Contracts.SuretyHook, StartBlock: dep.Block, Confirmations: cfg.Confirmations, Logger: log})
		if err != nil {
			return err
		}
	}
	// The ERC-8004 registries: agent ids beside DIDs, feedback; a DID's agents are those whose
	// owner or wallet the stake index binds to it.
	if dep.Contracts.IdentityRegistry != (common.Address{}) {
		st.erc8004, err = erc8004.NewIndexer(ctx, erc8004.IndexerConfig{DB: st.db, Chain: st.chainRow, Client: st.chain,
			IdentityRegistry: dep.Contracts.IdentityRegistry, ReputationRegistry: dep.Contracts.ReputationRegistry,
			ValidationRegistry: dep.Contracts.ValidationRegistry, StartBlock: dep.Block, Confirmations: cfg.Confirmations,
			Bindings: st.stakes, Logger: log})
		if err != nil {
			return err
		}
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
	n := st.Node
	agents, ids := st.agents, st.ids
	st.stakes.Watch(func(ctx context.Context, changes []stake.Change) {
		dids := make([]string, len(changes))
		for i, c := range changes {
			dids[i] = c.DID
			if c.Event == "Revoked" || c.Event == "Rotated" {
				// The status lists show a closed DID from the block the index holds it.
				ids.ForgetStatusLists()
			}
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
	// The host and what gossips over it outlive New's ctx: Close stops them.
	st.p2pCtx, st.p2pStop = context.WithCancel(context.WithoutCancel(ctx))
	st.onClose(st.p2pStop)
	// The deny list holds from the first dial; Run rereads it as it changes.
	var denied []peer.ID
	if cfg.DenyFile != "" {
		if denied, err = ReadDenyFile(cfg.DenyFile); err != nil {
			return fmt.Errorf("--p2p-deny: %w", err)
		}
	}
	st.p2p, err = p2p.Start(st.p2pCtx, p2p.Config{Key: peerKey, Listen: cfg.P2PListen, Bootstrap: st.seeds, Deny: denied,
		Validators: st.agents.DHTValidators(), Topics: []string{registry.CardTopic, reputation.AuditTopic, groups.Topic}, Logger: log})
	if err != nil {
		return err
	}
	host, stop := st.p2p, st.p2pStop
	st.onClose(func() {
		stop()
		host.Close()
	})
	if st.cardNet, err = st.agents.Attach(st.p2pCtx, st.p2p, log); err != nil {
		return err
	}
	st.onClose(st.cardNet.Close) // its lookups first, before the host they run on
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
	if st.jobIndex != nil {
		st.jobs = jobs.NewService(jobs.ServiceConfig{Indexer: st.jobIndex, Chain: st.chain, Tx: st.txs, JobEscrow: dep.Contracts.JobEscrow, Hook: dep.Contracts.SuretyHook})
	}
	if st.erc8004 != nil {
		st.agentIDs = erc8004.NewService(erc8004.ServiceConfig{Tx: st.txs, Chain: st.chain, ChainID: st.id.ChainID.Uint64(),
			IdentityRegistry: dep.Contracts.IdentityRegistry, ReputationRegistry: dep.Contracts.ReputationRegistry,
			ValidationRegistry: dep.Contracts.ValidationRegistry, Index: st.erc8004})
	}
	held, err := LoadWallets(WalletDir(cfg.DataDir), st.pass)
	if err != nil {
		return err
	}
	for _, k := range held {
		if _, err := st.txs.AddKey(ctx, k); err != nil {
			return err
		}
	}
	if len(held) > 0 {
		log.Info("holding wallets", "count", len(held), "dir", WalletDir(cfg.DataDir))
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
	st.audits = audits
	st.auditLog, err = reputation.OpenLog(ctx, st.db, st.chainRow, reputation.LogConfig{Epoch: cfg.LogEpoch, Grace: cfg.LogGrace, Signer: st.ids})
	if err != nil {
		return err
	}
	anchorer, err := anchorFor(cfg, st.kind, st.txs, dep, log)
	if err != nil {
		return err
	}
	if st.Node.register, err = st.registerNode(anchorer); err != nil {
		return err
	}
	n := st.Node
	var feedback reputation.FeedbackSource // ERC-8004 feedback, imported by reputation's rule
	if st.erc8004 != nil {
		feedback = auditor.Feedback{Index: st.erc8004}
	}
	st.reputation = reputation.NewService(reputation.ServiceConfig{Store: audits, Log: st.auditLog, Anchorer: anchorer, Stakes: st.stakes, Logger: log,
		Ready: st.syncer.Synced(), Clock: cfg.ScoreStep, Feedback: feedback,
		Nodes: stakedNodes{stakes: st.stakes, min: st.minStake}, Quorum: cfg.LogQuorum,
		Anchors: chainAnchors{chain: st.chain, contract: dep.Contracts.RootAnchor, abi: contracts.NewRootAnchor()},
		Params:  reputation.Params{MinStake: auditor.MinStakeWhole(st.minStake, st.stakeToken)},
		CatchUp: func(ctx context.Context) error {
			if err := n.stakes.CatchUp(ctx); err != nil {
				return err
			}
			return n.index.CatchUp(ctx)
		},
		Rules: &reputation.Rules{ChainID: st.id.ChainID.Uint64(), Escrow: dep.Contracts.BountyEscrow,
			Bounties: auditor.Bounties{Index: st.index}, Wallets: st.stakes, Agents: knownAgents{st.agents, st.stakes},
			Settlements: auditor.Bounties{Index: st.index}, PricedTokens: auditor.PricedTokens(st.stakeAddr)}})
	// Bindings that changed while the node was down weigh the audits from now on.
	if err := st.reputation.Recheck(ctx, st.missed, nil); err != nil {
		return fmt.Errorf("reputation: recheck after catching up with the chain: %w", err)
	}
	st.missed = nil
	st.agents.UseReputation(st.reputation) // ranks by it, and tells it when stakes change
	// A settlement indexed after the audits that name it backs them from then on.
	if st.erc8004 != nil {
		// New, revoked or re-owned ERC-8004 feedback moves the imported signal.
		st.erc8004.OnFeedback(n.reputation.FeedbackChanged)
	}
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
		if n.erc8004 != nil {
			n.reputation.FeedbackChanged() // a settlement may let a wallet's ERC-8004 feedback count
		}
		if err := n.reputation.Recheck(ctx, nil, ended); err != nil && ctx.Err() == nil {
			log.Warn("reputation: recheck after settlements", "err", err)
		}
	})
	if err := st.reputation.Attach(st.p2p, st.ids.VerifyEnvelope, log); err != nil {
		return err
	}
	st.reputation.AttachSync(st.syncer, st.ids.CheckArchived)
	if dep.Contracts.RootAnchor != (common.Address{}) {
		// The scores of each anchored head, from the log and the chain alone: what auditors check.
		n.scorer = auditor.NewScorer(auditor.ScorerConfig{Chain: st.chain, Deployment: dep, Log: st.auditLog, Store: audits,
			Confirmations: cfg.Confirmations, Dir: filepath.Join(cfg.DataDir, "scratch"), Logger: log})
	}
	return st.threads.Attach(st.p2p)
}

// serve builds the API over everything above and says the node is ready.
func (st *startup) serve(ctx context.Context) error {
	cfg, log := st.cfg, st.log
	peerBinding, err := st.ids.SignAsNode(identity.PeerBindingPayload(st.ids.NodeDID(), st.p2p.Host.ID().String()), identity.PeerBindingType)
	if err != nil {
		return err
	}
	info := api.ChainInfo{ID: st.id.ChainID.Uint64(), Genesis: st.id.Genesis, Kind: st.kind, Key: st.key, MinStake: st.minStake, Confirmations: st.cfg.Confirmations}
	for _, c := range st.named {
		info.Contracts = append(info.Contracts, api.Contract{Name: c.Name, Address: c.Address})
	}
	indexes := []api.Index{st.index, st.stakes}
	var jobRoutes api.Jobs
	if st.jobs != nil {
		indexes, jobRoutes = append(indexes, st.jobIndex), st.jobs
	}
	var agentIDs api.ERC8004
	var agentIDRelay api.ERC8004Relay
	if st.erc8004 != nil {
		indexes, agentIDs, agentIDRelay = append(indexes, st.erc8004), st.erc8004, st.agentIDs
	}
	st.api, err = api.New(api.Config{Jobs: jobRoutes, ERC8004: agentIDs, ERC8004Relay: agentIDRelay, Version: cfg.Version, Chain: info, Blocks: st.chain, DB: st.db, Operations: st.db, OperationsChain: st.chainRow, Identity: st.ids,
		Bounties: st.bounties, Staking: st.staking, Senders: st.txs, Wallets: st.ids, Stakes: st.stakes, Indexes: indexes, ChainRPC: st.chain, Agents: st.agents,
		Credentials: st.ids, CredentialStakes: st.stakes, StakeHistory: st.staking,
		Reputation: st.reputation, Groups: st.threads, AuditLog: st.auditLog, ScoredHeads: st.audits, Peers: peersOf{st.p2p, st.cardNet}, PeerBinding: peerBinding, Logger: log,
		TrustedProxies: cfg.TrustedProxies, RequestTimeout: requestTimeout(cfg.RequestTimeout, st.kind), PublicURL: publicURL(cfg.PublicURL, st.ln),
		Explorer: explorerHandler(cfg.NoExplorer), CORSOrigins: cfg.CORSOrigins})
	if err != nil {
		return err
	}
	// /mcp: the same API as MCP tools, called in process as the caller; it holds no key.
	if !cfg.NoMCP {
		st.api.MountMCP(mcp.NewHandler(mcp.HTTPConfig{API: st.api.Handler(), Version: cfg.Version}))
	}
	head, err := st.chain.BlockNumber(ctx)
	if err != nil {
		return fmt.Errorf("read block number: %w", err)
	}
	log.Info("node ready", "api", "http://"+st.ln.Addr().String(), "chain", st.id.ChainID, "kind", st.kind,
		"block", head, "state", st.key, "did", st.ids.NodeDID(), "data", cfg.DataDir)
	fmt.Fprintf(st.out, "Surety node ready on http://%s (chain %s, %s, block %d)\n  node DID %s\n  peer %s\n  try: curl -s http://%s/v1/info\n",
		st.ln.Addr(), st.id.ChainID, st.kind, head, st.ids.NodeDID(), st.p2p.Addrs()[0], st.ln.Addr())
	if !cfg.NoExplorer {
		fmt.Fprintf(st.out, "  explorer: %s\n", st.Node.ExplorerURL())
	}
	return nil
}

// startEmbedded starts the in-process chain, deploys the contracts from dev account 0, and
// prints the dev accounts.
func startEmbedded(ctx context.Context, cfg Config, out io.Writer) (chain.Client, *contracts.Deployment, error) {
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

// Run serves the API until ctx ends, with the node's other parts: the chain indexes,
// scoring, the known peers kept, the network rejoined and synced, the deny list applied and
// the node's DID registered on chain. It returns once every part has: with the first real
// error of one of them (which stops the others), else nil. Close the node after it.
func (n *Node) Run(ctx context.Context) error {
	g, ctx := errgroup.WithContext(ctx)
	part := func(run func(context.Context) error) {
		g.Go(func() error {
			if err := run(ctx); err != nil && !(errors.Is(err, context.Canceled) && ctx.Err() != nil) {
				return err
			}
			return nil
		})
	}
	g.Go(func() error { return n.api.Serve(ctx, n.ln, shutdownGrace) })
	part(n.index.Run)
	part(n.stakes.Run)
	if n.jobIndex != nil {
		part(n.jobIndex.Run)
	}
	if n.erc8004 != nil {
		part(n.erc8004.Run)
	}
	part(n.reputation.Run)
	if n.scorer != nil {
		part(n.scorer.Run)
	}
	part(n.keepKnownPeers) // saves once more when ctx ends, before the host closes
	part(func(ctx context.Context) error {
		n.p2p.Rejoin(ctx, p2p.RejoinConfig{Seeds: n.seeds, Logger: n.cfg.Logger})
		return nil
	})
	part(func(ctx context.Context) error {
		n.syncer.Run(ctx)
		return nil
	})
	if n.cfg.DenyFile != "" {
		part(n.keepDenying)
	}
	if n.register != nil {
		part(n.registerOnChain)
	}
	err := g.Wait()
	n.cfg.Logger.Info("node stopped")
	return err
}

// Close closes what New opened, in the reverse order: the network, the database, the chain,
// the API port and the data dir's lock. It is safe to call more than once.
func (n *Node) Close() {
	n.closed.Do(func() {
		for i := len(n.closers) - 1; i >= 0; i-- {
			n.closers[i]()
		}
	})
}

// onClose adds what undoes the step just taken to what Close runs.
func (n *Node) onClose(f func()) { n.closers = append(n.closers, f) }

// publicURL is the configured public URL, or http:// and the address the API listens on.
func publicURL(configured string, ln net.Listener) string {
	if configured != "" {
		return configured
	}
	return "http://" + ln.Addr().String()
}

// APIURL is the API's base URL: http://host:port, with the port the node listens on.
func (n *Node) APIURL() string { return "http://" + n.ln.Addr().String() }

// ExplorerURL is the web explorer's address on the API ("" when the node serves none:
// Config.NoExplorer).
func (n *Node) ExplorerURL() string {
	if n.cfg.NoExplorer {
		return ""
	}
	return n.APIURL() + explorer.Prefix
}

// explorerHandler is the web explorer the API serves, nil when it serves none.
func explorerHandler(off bool) http.Handler {
	if off {
		return nil
	}
	return explorer.Handler()
}

// Chain is the chain the node settles on: a *chain.Embedded for the embedded chain, else the
// RPC chain's client. It stays open until Close.
func (n *Node) Chain() chain.Client { return n.chain }

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
	return kind == "embedded" || DevnetChain(chainID)
}

// DevnetChain says a chain id is a development chain's: the embedded chain's or Anvil's
// default. Keys for them may be kept under a generated passphrase.
func DevnetChain(chainID uint64) bool { return devnetChains[chainID] }

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
