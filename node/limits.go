package node

import (
	"time"

	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/reputation"
)

// Defaults of Config, which `surety node` shows as its flags' defaults.
const (
	// DefaultListen is the API address: loopback only, on a port few other programs use.
	DefaultListen = "127.0.0.1:7746"
	// DefaultRPCTimeout bounds the first call to an external chain at start.
	DefaultRPCTimeout = 5 * time.Second
	// DefaultDevAccounts is how many funded dev accounts the embedded chain has.
	DefaultDevAccounts = 10
	// DefaultLogEpoch and DefaultLogGrace are the audit log's (reputation.LogConfig).
	DefaultLogEpoch = reputation.DefaultEpoch
	DefaultLogGrace = reputation.DefaultGrace
	// DefaultSyncEvery is the time between rounds of anti-entropy (p2p.SyncConfig.Every).
	DefaultSyncEvery = p2p.DefaultSyncEvery
)

// PublicConfirmations is how many blocks the indexes wait on a chain that is not a devnet,
// unless Config.ConfirmationsGiven says otherwise.
const PublicConfirmations = 2

// syncWaitForPeer is how many anti-entropy rounds a node with peers to find waits for one
// that answers before it counts as synced anyway (p2p.SyncConfig.WaitForPeer).
const syncWaitForPeer = 5

// shutdownGrace is how long requests in flight may take to finish once Run's context ends.
const shutdownGrace = 10 * time.Second

// The node remembers the peers it knew (connected, and the rest of its DHT routing table), so
// a restart rejoins the network through any of them when its bootstrap peers are gone (at
// 66f817e such a node found no peer); while running, p2p.Node.Rejoin redials them whenever
// the node has too few connections.
const (
	peersFile     = "peers.json"
	maxKnownPeers = 64
	peerSaveEvery = 15 * time.Second
)

// denyEvery is how often the node rereads its Config.DenyFile.
const denyEvery = time.Second

// registerRetry is how long a node waits before it tries again to stake its DID.
const registerRetry = 5 * time.Second
