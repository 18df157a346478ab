package node

import (
	"log/slog"
	"math/big"
	"net"
	"time"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
)

// Config is everything a node needs. `surety node` fills it from flags, the environment and
// the config file, and checks the values it parses; the node checks what needs the chain.
type Config struct {
	// DataDir holds the node's database, keys, known peers and held wallets; New creates it.
	DataDir string
	// Listen is the API's address (host:port; port 0 picks a free one, see Node.APIURL).
	Listen string
	// PublicURL is the API's base URL as others reach it, named in the node's signed A2A
	// cards and in its credentials' status entries (api.Config.PublicURL); empty: http:// and
	// the address the API listens on.
	PublicURL string
	// NoMCP serves no /mcp: the node's MCP endpoint (mcp.NewHandler) is on by default, as it
	// does nothing the API would not do for the same request.
	NoMCP bool
	// NoExplorer serves no web explorer: it is on by default at /explorer/ (explorer.Handler),
	// and GET / redirects to it.
	NoExplorer bool
	// CORSOrigins are the origins whose browsers may call the API (api.Config.CORSOrigins);
	// empty: only the node's own origin.
	CORSOrigins []string
	// RPC is the external chain's URL; empty runs the embedded chain.
	RPC string
	// RequestTimeout bounds a request, a write's transaction included; 0: per chain
	// (requestTimeout).
	RequestTimeout time.Duration
	// ConfirmationsGiven says Confirmations was set; otherwise it is per chain: 0 on dev
	// chains, PublicConfirmations elsewhere.
	ConfirmationsGiven bool
	// Deployment says where the contracts are on the RPC chain.
	Deployment *contracts.Deployment
	// DevAccounts is how many funded dev accounts the embedded chain has (DefaultDevAccounts),
	// and how many of them the node holds where it holds the dev wallets.
	DevAccounts int
	// RPCTimeout bounds the first call to the RPC chain (DefaultRPCTimeout).
	RPCTimeout time.Duration
	// LogEpoch is how much audit time one append to the audit log covers (whole seconds), and
	// LogGrace how long after its end an epoch closes (DefaultLogEpoch, DefaultLogGrace).
	LogEpoch time.Duration
	LogGrace time.Duration
	// AnchorWallet anchors the audit log on chain; empty: dev account 0 where the node holds
	// the dev wallets, else no anchoring.
	AnchorWallet string
	// LogQuorum is how many distinct staked nodes must sign a peer's log head before the
	// node adopts its epoch (unless its signer anchored it on chain).
	LogQuorum int
	// RegisterNode stakes the node's DID from the anchoring wallet at start, so its log heads
	// count on other nodes: "auto" does on dev chains, "yes" anywhere, "no" never.
	RegisterNode string
	// Logger receives the node's log; nil discards it.
	Logger *slog.Logger
	// PassphraseFile holds the keystore passphrase; Passphrase is one the operator gave
	// otherwise ($SURETY_PASSPHRASE to `surety node`). Without either a development node
	// generates one in DataDir (see LoadPassphrase); an exposed node refuses to start.
	PassphraseFile string
	Passphrase     string
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
	// DevWallets makes the node hold the dev accounts' wallets on an RPC chain too (the
	// devnet funds them); the embedded chain always does.
	DevWallets bool
	// P2PListen are the libp2p listen multiaddrs; Bootstrap the peers to join through
	// (multiaddrs with /p2p/<id>).
	P2PListen []string
	Bootstrap []string
	// SyncEvery is the time between rounds of anti-entropy (0: DefaultSyncEvery).
	SyncEvery time.Duration
	// DenyFile, when set, names the peer ids the node refuses to connect to, reread as it
	// changes (see ReadDenyFile).
	DenyFile string
	// ScoreStep is the step of the time scores are computed at (0: the log epoch).
	ScoreStep time.Duration
	// Version is the version the API reports.
	Version string
}

// PassphraseEnv names the environment variable `surety` reads Config.Passphrase from; the
// node's messages name it.
const PassphraseEnv = "SURETY_PASSPHRASE"
