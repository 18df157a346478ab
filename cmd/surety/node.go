package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/memlimit"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/node"
	"github.com/surety-ioa/surety/reputation"
)

// passphraseEnv names the environment variable that may hold the keystore passphrase.
const passphraseEnv = node.PassphraseEnv

func runNodeCmd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "node", "[flags]", strings.TrimSpace(`
Run a Surety node: open (and migrate) the SQLite database in --data-dir, connect to a chain,
and serve the HTTP API on --listen until SIGINT or SIGTERM.

With no --rpc-url the node runs an embedded in-process chain (chain id 1337) with funded dev
accounts, whose keys it prints, and deploys every contract at start. The embedded chain's
state ends with the process. With --rpc-url URL --deployment FILE it uses an external chain such
as Anvil (see 'surety deploy' and 'surety devnet').`))
	cfg := node.Config{Version: version, Passphrase: e.getenv(passphraseEnv)}
	fs.StringVar(&cfg.DataDir, "data-dir", defaultDataDir(e), "directory for the node's database and keys")
	fs.StringVar(&cfg.Listen, "listen", node.DefaultListen, "address of the HTTP API")
	fs.StringVar(&cfg.PublicURL, "public-url", "", "the API's base URL as others reach it (https://node.example), named in the node's signed A2A cards and in the status entries of its credentials (default: http:// and the --listen address)")
	rpcURL := fs.rpcURL("JSON-RPC URL of an external chain (default: the embedded chain)")
	deployment := fs.String("deployment", "", "deployment file naming the contract addresses on the --rpc-url chain")
	fs.IntVar(&cfg.DevAccounts, "dev-accounts", node.DefaultDevAccounts, "funded dev accounts on the embedded chain")
	fs.DurationVar(&cfg.RPCTimeout, "rpc-timeout", node.DefaultRPCTimeout, "how long to wait for the --rpc-url chain to answer at start")
	fs.DurationVar(&cfg.LogEpoch, "log-epoch", node.DefaultLogEpoch, "how much audit time one append to the audit log covers (whole seconds)")
	fs.StringVar(&cfg.AnchorWallet, "anchor-wallet", "", "a wallet the node holds that anchors the audit log's heads on chain (default: dev account 0 on dev chains; none elsewhere)")
	fs.IntVar(&cfg.LogQuorum, "log-quorum", reputation.DefaultQuorum, "how many distinct staked nodes must sign a peer's audit-log head before this node adopts its epoch (a head its signer anchored on chain needs none more)")
	fs.StringVar(&cfg.RegisterNode, "register-node", "auto", "stake the node's DID at the deployment's minimum from the anchoring wallet, so other nodes count its log heads: auto (on dev chains), yes, no")
	fs.DurationVar(&cfg.LogGrace, "log-grace", node.DefaultLogGrace, "how long after its end an epoch of the audit log closes; keep it above the envelope lifetime (10m) plus skew, or late audits are refused")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", 0, "how long a request may take, a write's transaction and confirmations included (default: 30s on the embedded chain, 5m on others)")
	confirmations := fs.Int("confirmations", -1, "blocks the indexes wait before trusting an event (default: 0 on dev chains, the embedded one and Anvil's 31337; 2 elsewhere)")
	fs.BoolVar(&cfg.NoMCP, "no-mcp", false, "serve no MCP endpoint at /mcp (its tools do what the API does, signing nothing: writes take the caller's envelope)")
	fs.BoolVar(&cfg.NoExplorer, "no-explorer", false, "serve no web explorer at /explorer/ (a page of this API's own routes; / redirects to it)")
	var corsOrigins listFlag
	fs.Var(&corsOrigins, "cors-origin", "an origin whose browsers may call the API, e.g. https://app.example, or * for any (repeat)")
	fs.BoolVar(&cfg.DevWallets, "dev-wallets", false, "hold the public dev accounts' wallets on the --rpc-url chain (devnets only)")
	p2pListen := fs.String("p2p-listen", strings.Join(p2p.DefaultListen, ","), "libp2p listen multiaddrs, comma-separated")
	bootstrap := fs.String("bootstrap", "", "peers to join the network through: multiaddrs with /p2p/<id>, comma-separated")
	fs.DurationVar(&cfg.SyncEvery, "sync-every", node.DefaultSyncEvery, "how often the node pulls from peers the cards, group envelopes, audits and log epochs gossip did not bring it")
	fs.StringVar(&cfg.DenyFile, "p2p-deny", "", "file of peer ids (whitespace- or comma-separated) the node refuses to connect to; reread when it changes")
	fs.DurationVar(&cfg.ScoreStep, "score-step", 0, "scores are computed as of the start of each step of this length, the same instant on every node (default: --log-epoch)")
	fs.StringVar(&cfg.PassphraseFile, "passphrase-file", "", "file holding the passphrase that encrypts the node's keys (default: $"+passphraseEnv+", else one generated in --data-dir)")
	minStake := fs.String("min-stake", "", "embedded chain only: the minimum stake its deployment fixes (default 0.1ether); elsewhere StakeRegistry.minStake rules")
	trustedProxy := fs.String("trusted-proxy", "", "proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For names the client; without it the client is the socket's peer")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	memLimit := fs.String("memory-limit", fmt.Sprintf("%dMiB", memlimit.DefaultFloor>>20), "soft limit on the node's Go memory: past max(this, 1.5 × the live heap) the garbage collector works harder instead of the process growing (0: Go's default; GOMEMLIMIT in the environment wins)")
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
	for _, o := range corsOrigins {
		origin, err := api.ParseOrigin(o)
		if err != nil {
			return usagef("--cors-origin: %v", err)
		}
		cfg.CORSOrigins = append(cfg.CORSOrigins, origin)
	}
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
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return usagef("--public-url %q is not a base URL like https://node.example", cfg.PublicURL)
		}
	}
	if cfg.ScoreStep < 0 || (cfg.ScoreStep > 0 && cfg.ScoreStep < time.Second) {
		return usagef("--score-step must be at least 1s, got %s", cfg.ScoreStep)
	}
	if cfg.SyncEvery < 100*time.Millisecond {
		return usagef("--sync-every must be at least 100ms, got %s", cfg.SyncEvery)
	}
	if cfg.DenyFile != "" {
		if _, err := node.ReadDenyFile(cfg.DenyFile); err != nil {
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
	sqlite.LimitMallocArenas()
	n, err := node.New(ctx, cfg, e.stdout)
	if err != nil {
		return startError{err}
	}
	defer n.Close()
	return n.Run(ctx)
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

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
