package node_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
)

// memoryChildEnv names, in the environment of a re-run of this test binary, the database
// whose registry and reputation the run opens and measures (openAndMeasure) instead of
// running tests.
const memoryChildEnv = "SURETY_NODE_MEMORY_DB"

// memoryAuditsEnv gives the re-run how many audits the database holds (the agents' stakes
// follow from it).
const memoryAuditsEnv = "SURETY_NODE_MEMORY_AUDITS"

func TestMain(m *testing.M) {
	if path := os.Getenv(memoryChildEnv); path != "" {
		if err := openAndMeasure(path); err != nil {
			fmt.Fprintln(os.Stderr, "node memory:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkNodeMemory measures what a node holds in memory for its cards and audits: a node's
// database is filled with $SURETY_BENCH_CARDS cards (100,000 by default; staked as a node
// holds them: a tenth unstaked, at most registry.MaxUnstakedCards) and
// $SURETY_BENCH_AUDITS audits among a tenth as many agents (1,000,000), then a fresh process
// (this test binary, run again) opens it as the node does at start: the registry with its
// search and semantic indexes, and the reputation service through its first computation,
// answering a search and a reputation query. It reports that process's peak RSS (VmHWM, in
// MB) and how long the opening took; the reference is the same process on an empty database.
// `make bench-large` runs it at 1M cards and 10M audits.
func BenchmarkNodeMemory(b *testing.B) {
	cards, audits := envInt("SURETY_BENCH_CARDS", 100_000), envInt("SURETY_BENCH_AUDITS", 1_000_000)
	dir := b.TempDir()
	empty, full := filepath.Join(dir, "empty.db"), filepath.Join(dir, "full.db")
	start := time.Now()
	for _, f := range []struct {
		path          string
		cards, audits int
	}{{empty, 0, 0}, {full, cards, audits}} {
		if err := fillNodeDB(f.path, f.cards, f.audits); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("filled %d cards and %d audits in %s", cards, audits, time.Since(start).Round(time.Second))
	b.ResetTimer()
	for range b.N {
		base, err := measureChild(empty, 0)
		if err != nil {
			b.Fatal(err)
		}
		got, err := measureChild(full, audits)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(got["peak-MB"], "peak-MB")
		b.ReportMetric(base["peak-MB"], "empty-peak-MB")
		b.ReportMetric(got["open-s"], "open-s")
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchStakes is the stake of the benchmark's staked agents, for the registry (in wei) and
// the reputation service (in ETH): every tenth agent.
type benchStakes struct{ staked map[string]float64 }

func (s benchStakes) StakeOf(_ context.Context, did string, _ common.Address) (*big.Int, error) {
	eth := s.staked[did]
	return new(big.Int).Mul(big.NewInt(int64(eth*1000)), big.NewInt(1e15)), nil
}

func (s benchStakes) StakedAgents(context.Context) (map[string]float64, error) { return s.staked, nil }

// memoryDID is agent i of the benchmark's audits.
func memoryDID(i int) string { return fmt.Sprintf("did:key:z6MkMemory%07d", i) }

// openNodeDB opens the database at path as a node does, with its registry on stakes.
func openNodeDB(ctx context.Context, path string, stakes benchStakes) (*sql.DB, int64, *registry.Registry, error) {
	db, err := sqlite.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	row, err := sqlite.EnterChain(ctx, db, sqlite.Chain{Key: "bench", ChainID: 1, Genesis: "g", Contracts: "{}"})
	if err != nil {
		db.Close()
		return nil, 0, nil, err
	}
	r, err := registry.New(ctx, registry.Config{DB: db, Chain: row, Stakes: stakes, UnstakedPerMinute: 1 << 30, MaxUnstaked: 1 << 30})
	if err != nil {
		db.Close()
		return nil, 0, nil, err
	}
	return db, row, r, nil
}

// stakesFor stakes the card DIDs as a node holds them (all but a tenth, at most
// registry.MaxUnstakedCards unstaked: until 2026-11-27 a tenth were staked, which no node
// holds past 11,111 cards), and every tenth of the audit agents.
func stakesFor(cardDIDs []string, agents int) benchStakes {
	s := benchStakes{staked: map[string]float64{}}
	for i := range cardDIDs {
		if testutil.StakedAsANodeHolds(i, len(cardDIDs), registry.MaxUnstakedCards) {
			s.staked[cardDIDs[i]] = 1 + float64(i%7)
		}
	}
	for i := 0; i < agents; i += 10 {
		s.staked[memoryDID(i)] = 1 + float64(i%7)
	}
	return s
}

// fillNodeDB writes cards signed cards (their DIDs, in order, to path + ".dids") and audits
// audits into a new node database at path.
func fillNodeDB(path string, cards, audits int) error {
	ctx := context.Background()
	keys := make([]*identity.Key, cards)
	dids := make([]string, cards)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < cards; i += workers {
				k, err := identity.GenerateKey(identity.Ed25519)
				if err != nil {
					panic(err)
				}
				keys[i], dids[i] = k, k.DID.String()
			}
		})
	}
	wg.Wait()
	if err := os.WriteFile(path+".dids", []byte(strings.Join(dids, "\n")), 0o600); err != nil {
		return err
	}
	stakes := stakesFor(dids, audits/10)
	db, row, r, err := openNodeDB(ctx, path, stakes)
	if err != nil {
		return err
	}
	defer db.Close()
	words := []string{"translate", "summarize", "audit", "research", "legal", "medical", "code", "review", "image", "audio", "tax", "security"}
	jws := make(chan []byte, 256)
	go func() { // the signing runs beside the registration, which writes one card at a time
		defer close(jws)
		for i, k := range keys {
			w1, w2 := words[i%len(words)], words[(i/12)%len(words)]
			sc, err := registry.Sign(registry.Card{DID: dids[i], Name: fmt.Sprintf("%s agent %d", w1, i),
				Description: fmt.Sprintf("%s and %s for marketplaces, papers and contracts", w1, w2), Capabilities: []string{w1, w2 + "/" + w1},
				Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}}, Wallet: common.HexToAddress("0x01"), Seq: 1, Updated: time.Now().Unix()}, k)
			if err != nil {
				panic(err)
			}
			jws <- []byte(sc.JWS)
		}
	}()
	i := 0
	for card := range jws {
		if _, err := r.Register(ctx, card, strconv.Itoa(i)); err != nil {
			for range jws { // let the signer finish
			}
			return fmt.Errorf("card %d: %w", i, err)
		}
		i++
	}
	if _, err := reputation.OpenStore(ctx, db, row); err != nil {
		return err
	}
	if audits/10 < 2 {
		return nil
	}
	return testutil.FillAudits(ctx, db, row, audits, audits/10, memoryDID)
}

// measureChild runs this test binary again on the database at path, which holds audits
// audits (openAndMeasure), and returns what it printed, as name → value.
func measureChild(path string, audits int) (map[string]float64, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), memoryChildEnv+"="+path, memoryAuditsEnv+"="+strconv.Itoa(audits))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("measure %s: %w: %s", filepath.Base(path), err, stderr.String())
	}
	got := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if name, v, ok := strings.Cut(sc.Text(), " "); ok {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				got[name] = x
			}
		}
	}
	if _, ok := got["peak-MB"]; !ok {
		return nil, fmt.Errorf("measure %s: no peak-MB in %q", filepath.Base(path), out)
	}
	return got, nil
}

// openAndMeasure opens the database at path as a node does at start (registry, reputation
// through its first computation), answers one search and one reputation query, and prints
// the process's peak RSS in MB and the time it took to open.
func openAndMeasure(path string) error {
	ctx := context.Background()
	var dids []string
	if b, err := os.ReadFile(path + ".dids"); err != nil {
		return err
	} else if len(b) > 0 {
		dids = strings.Split(string(b), "\n")
	}
	audits, err := strconv.Atoi(os.Getenv(memoryAuditsEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", memoryAuditsEnv, err)
	}
	stakes := stakesFor(dids, audits/10)
	start := time.Now()
	db, row, r, err := openNodeDB(ctx, path, stakes)
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := reputation.OpenStore(ctx, db, row)
	if err != nil {
		return err
	}
	svc := reputation.NewService(reputation.ServiceConfig{Store: store, Stakes: stakes, Rules: &reputation.Rules{}})
	if err := svc.Refresh(ctx); err != nil {
		return err
	}
	opened := time.Since(start)
	if len(dids) > 0 {
		if res, err := r.Search(ctx, registry.Query{Text: "audit contracts"}); err != nil || len(res) == 0 {
			return fmt.Errorf("search after the start: %d results, %v", len(res), err)
		}
	}
	if audits > 0 {
		if rep, err := svc.Reputation(ctx, memoryDID(1)); err != nil || rep.Audits == 0 {
			return fmt.Errorf("reputation after the start: %+v, %v", rep, err)
		}
	}
	peak, err := testutil.ProcStatus(os.Getpid(), "VmHWM")
	if err != nil {
		return err
	}
	fmt.Printf("peak-MB %g\nopen-s %g\n", float64(peak)/1e6, opened.Seconds())
	return nil
}
