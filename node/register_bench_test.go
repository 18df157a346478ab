package node_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
)

// everyoneStaked is a StakeReader for which every agent staked 1 ETH, answering at once as
// the node's per-block stake cache does.
type everyoneStaked struct{}

func (everyoneStaked) StakeOf(context.Context, string, common.Address) (*big.Int, error) {
	return big.NewInt(1e18), nil
}

// The clients of BenchmarkRegisterHTTP: 8 at once, each sending from 8 loopback addresses of
// its own (127.0.<client>.<1..8>), so that the 64 addresses stay within the API's write
// limit per address (50 a second, 200 at once) at the rate measured: the benchmark measures
// the node's capacity with its public limits as they are.
const (
	registerClients      = 8
	registerAddresses    = 8
	registerCardsClient  = 1_000
	registerInfoRequests = 2_000
)

// BenchmarkRegisterHTTP measures registrations over HTTP: the API server (echo, its
// middleware and limits as a node serves them) on a 127.0.0.1 listener, a registry on a
// SQLite file (WAL) with a libp2p host attached (gossip, DHT put), assembled as node.New
// does but with a stake reader for which every agent staked (staking thousands of DIDs on
// the embedded chain first would take longer than the run), and 8 clients at once,
// each posting the signed cards of fresh staked agents (1,000 each: a new DID each) one
// after another. Staked, because an unstaked card is limited to 6 a minute per source by
// design. It reports registrations/s, and as its reference GET /v1/info requests/s from the
// same clients on the same server in the same run. Target (issue 31): ≥ 1,000
// registrations/s.
func BenchmarkRegisterHTTP(b *testing.B) {
	ctx := context.Background()
	db := testutil.DB(b)
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "t", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		b.Fatal(err)
	}
	defer sqlite.StartCheckpointer(db, 0, nil).Close() // as node.New does
	reg, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: everyoneStaked{}})
	if err != nil {
		b.Fatal(err)
	}
	node, err := p2p.Start(ctx, p2p.Config{Validators: reg.DHTValidators(), Topics: []string{registry.CardTopic}})
	if err != nil {
		b.Fatal(err)
	}
	defer node.Close()
	if _, err := reg.Attach(ctx, node, nil); err != nil {
		b.Fatal(err)
	}
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(1, chain.DefaultDevBalance)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.Mine()
	s, err := api.New(api.Config{Version: "v-bench", Chain: api.ChainInfo{ID: chain.EmbeddedChainID, Kind: "embedded"}, Blocks: c, DB: db,
		Identity: benchIdentity(b, db), Agents: reg})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, ln, 5*time.Second) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			b.Error(err)
		}
	}()
	base := "http://" + ln.Addr().String()
	clients := make([][]*http.Client, registerClients)
	for i := range clients {
		for j := range registerAddresses {
			clients[i] = append(clients[i], fromAddress(b, fmt.Sprintf("127.0.%d.%d", i+1, j+1)))
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		cards := freshCards(b, registerClients*registerCardsClient)
		infoRate := rate(b, clients, registerInfoRequests/registerClients, func(h *http.Client, _, _ int) error {
			return send(h, http.MethodGet, base+"/v1/info", nil, http.StatusOK)
		})
		cpu := cpuTime(b)
		b.StartTimer()
		regRate := rate(b, clients, registerCardsClient, func(h *http.Client, client, i int) error {
			return send(h, http.MethodPost, base+"/v1/agents", cards[client*registerCardsClient+i], http.StatusCreated)
		})
		b.StopTimer()
		// On a shared machine the rate moves with the load; the CPU time the process spent
		// per registration (server and clients) moves less.
		b.Logf("%.0f µs of CPU per registration (server and clients)", (cpuTime(b)-cpu).Seconds()*1e6/float64(registerClients*registerCardsClient))
		b.ReportMetric(regRate, "registrations/s")
		b.ReportMetric(infoRate, "info-req/s")
		b.StartTimer()
	}
}

// fromAddress is an HTTP client whose connections leave from the loopback address ip.
func fromAddress(b *testing.B, ip string) *http.Client {
	local, err := net.ResolveTCPAddr("tcp", ip+":0")
	if err != nil {
		b.Fatal(err)
	}
	d := &net.Dialer{LocalAddr: local, Timeout: 5 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 2}}
}

// rate runs each client's n requests (do) one after another, the clients at once, each
// request from the client's next address; it returns the requests answered a second.
func rate(b *testing.B, clients [][]*http.Client, n int, do func(h *http.Client, client, i int) error) float64 {
	var (
		wg     sync.WaitGroup
		failed atomic.Pointer[error]
	)
	start := time.Now()
	for ci, hs := range clients {
		wg.Go(func() {
			for i := range n {
				if err := do(hs[i%len(hs)], ci, i); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return float64(n*len(clients)) / took.Seconds()
}

// send makes one request and wants status back.
func send(h *http.Client, method, url string, body []byte, status int) error {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/jose")
	}
	resp, err := h.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, got)
	}
	return nil
}

// freshCards signs n cards of new agents (a new key each), on every CPU at once.
func freshCards(b *testing.B, n int) [][]byte {
	cards := make([][]byte, n)
	var (
		wg      sync.WaitGroup
		failed  atomic.Pointer[error]
		workers = runtime.GOMAXPROCS(0)
	)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				k, err := identity.GenerateKey(identity.Ed25519)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				sc, err := registry.Sign(registry.Card{DID: k.DID.String(), Name: fmt.Sprintf("Agent %d", i), Description: "does useful things for other agents",
					Capabilities: []string{"work", fmt.Sprintf("tag-%d", i%50)}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}},
					Wallet: common.HexToAddress("0x01"), Seq: 1, Updated: time.Now().Unix()}, k)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				cards[i] = []byte(sc.JWS)
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	return cards
}

// benchIdentity is the node's identity service on db (a cheap keystore KDF).
func benchIdentity(b *testing.B, db *sql.DB) *identity.Service {
	ctx := context.Background()
	store, err := identity.OpenStore(ctx, db, identity.StoreConfig{Passphrase: []byte("bench"), KDF: identity.KDFParams{N: 1 << 10, R: 8, P: 1}})
	if err != nil {
		b.Fatal(err)
	}
	key, _, err := store.NodeKey(ctx)
	if err != nil {
		b.Fatal(err)
	}
	v := identity.NewVerifier(identity.VerifierConfig{Started: time.Now().Add(-time.Minute)})
	return identity.NewService(identity.ServiceConfig{Store: store, Node: key, Verifier: v})
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
