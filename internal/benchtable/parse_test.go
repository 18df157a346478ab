package benchtable

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const sampleGo = `goos: linux
goarch: amd64
pkg: github.com/surety-ioa/surety/identity
cpu: AMD EPYC
BenchmarkEnvelopeSign/ed25519/raw-2         	   52344	     22910 ns/op	       0 B/op	       0 allocs/op
BenchmarkEnvelopeSign/ed25519/envelope-2    	   48000	     24771 ns/op	    1536 B/op	       9 allocs/op
PASS
ok  	github.com/surety-ioa/surety/identity	5.213s
goos: linux
goarch: amd64
pkg: github.com/surety-ioa/surety/registry
cpu: AMD EPYC
BenchmarkRegister-2        	2026/01/02 10:00:00 WARN dht: routing table empty
       1	7907843041 ns/op	         0.5900 p50-ms	         8.005 p99-ms
BenchmarkSearch-2   	       1	9.1e+09 ns/op	 0.8 p50-ms	 3.2 p99-ms	 1.5 p99-ms/text+cap
PASS
ok  	github.com/surety-ioa/surety/registry	61.0s
pkg: github.com/surety-ioa/surety/cmd/surety
--- SKIP: BenchmarkPostRoundTrip
    bench_test.go:25: skipping: anvil: tools: not installed (run 'make tools')
pkg: github.com/surety-ioa/surety/escrow
--- FAIL: BenchmarkIndexerCatchUp-2
BenchmarkRecompute 	       3	 260000000 ns/op	        12.00 iterations
FAIL
`

func TestParseGoBench(t *testing.T) {
	const id, reg = "github.com/surety-ioa/surety/identity", "github.com/surety-ioa/surety/registry"
	tests := []struct {
		name string
		in   string
		want *Run
	}{
		{"empty", "", &Run{}},
		{"noise only", "PASS\nok  \tx\t0.1s\n?   \ty\t[no test files]\n", &Run{}},
		{"sample", sampleGo, &Run{
			GOOS: "linux", GOARCH: "amd64", CPU: "AMD EPYC",
			Results: []Result{
				{Pkg: id, Name: "BenchmarkEnvelopeSign/ed25519/raw", Procs: 2, N: 52344, Metrics: []Metric{{22910, "ns/op"}, {0, "B/op"}, {0, "allocs/op"}}},
				{Pkg: id, Name: "BenchmarkEnvelopeSign/ed25519/envelope", Procs: 2, N: 48000, Metrics: []Metric{{24771, "ns/op"}, {1536, "B/op"}, {9, "allocs/op"}}},
				{Pkg: reg, Name: "BenchmarkRegister", Procs: 2, N: 1, Metrics: []Metric{{7907843041, "ns/op"}, {0.59, "p50-ms"}, {8.005, "p99-ms"}}},
				{Pkg: reg, Name: "BenchmarkSearch", Procs: 2, N: 1, Metrics: []Metric{{9.1e9, "ns/op"}, {0.8, "p50-ms"}, {3.2, "p99-ms"}, {1.5, "p99-ms/text+cap"}}},
				{Pkg: "github.com/surety-ioa/surety/escrow", Name: "BenchmarkRecompute", N: 3, Metrics: []Metric{{2.6e8, "ns/op"}, {12, "iterations"}}},
			},
			Skipped: []string{"github.com/surety-ioa/surety/cmd/surety BenchmarkPostRoundTrip"},
			Failed:  []string{"github.com/surety-ioa/surety/escrow BenchmarkIndexerCatchUp"},
		}},
		{"name with a dash that is not GOMAXPROCS", "BenchmarkX/a-b-4 10 5 ns/op\nBenchmarkY/v-0 1 2 ns/op\nBenchmarkZ/+2 1 2 ns/op\n", &Run{Results: []Result{
			{Name: "BenchmarkX/a-b", Procs: 4, N: 10, Metrics: []Metric{{5, "ns/op"}}},
			{Name: "BenchmarkY/v-0", N: 1, Metrics: []Metric{{2, "ns/op"}}},
			{Name: "BenchmarkZ/+2", N: 1, Metrics: []Metric{{2, "ns/op"}}},
		}}},
		{"not results", "BenchmarkA 10\nBenchmarkB 10 5\nBenchmarkC x 5 ns/op\nBenchmarkD 1 NaN ns/op\nBenchmarkE 1 Inf ns/op\nBenchmarkF -1 5 ns/op\n", &Run{}},
		{"figures after a name only count once", "BenchmarkA-2\t\n 1 5 ns/op\n 1 6 ns/op\n", &Run{Results: []Result{
			{Name: "BenchmarkA", Procs: 2, N: 1, Metrics: []Metric{{5, "ns/op"}}},
		}}},
		{"a new package drops a pending name", "BenchmarkA-2\tlog\npkg: p\n 1 5 ns/op\n", &Run{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseGoBench(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseGoBench (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGoBenchTooLongLine(t *testing.T) {
	if _, err := ParseGoBench(strings.NewReader(strings.Repeat("x", maxLine+1))); err == nil {
		t.Fatal("a line past maxLine was accepted")
	}
}

func TestParseGasSnapshot(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Result
		wantErr string
	}{
		{"empty", "", nil, ""},
		{"forge's three shapes", `RootAnchorTest:test_anchor_recordsRootAndEmits() (gas: 68592)
RootAnchorTest:testFuzz_anchor_onlyMovesForward(uint64,uint64,bytes32) (runs: 256, μ: 74313, ~: 74310)

BountyEscrowInvariantTest:invariant_balanceEqualsWhatIsOwed() (runs: 64, calls: 2048, reverts: 0)
`, []Result{
			{Pkg: GasSnapshot, Name: "RootAnchorTest:test_anchor_recordsRootAndEmits()", N: 1, Metrics: []Metric{{68592, "gas"}}},
			{Pkg: GasSnapshot, Name: "RootAnchorTest:testFuzz_anchor_onlyMovesForward(uint64,uint64,bytes32)", N: 1, Metrics: []Metric{{256, "runs"}, {74313, "gas-mean"}, {74310, "gas-median"}}},
			{Pkg: GasSnapshot, Name: "BountyEscrowInvariantTest:invariant_balanceEqualsWhatIsOwed()", N: 1, Metrics: []Metric{{64, "runs"}, {2048, "calls"}, {0, "reverts"}}},
		}, ""},
		{"no figures", "A:t()\n", nil, "line 1"},
		{"not Contract:test", "test() (gas: 1)\n", nil, "not Contract:test"},
		{"unknown key", "A:t() (weight: 1)\n", nil, "unknown figure"},
		{"negative", "A:t() (gas: -1)\n", nil, "gas"},
		{"duplicate key", "A:t() (gas: 1, gas: 2)\n", nil, "twice"},
		{"past float64", "A:t() (gas: 9007199254740993)\n", nil, "exactly"},
		{"line number", "A:t() (gas: 1)\nB:u() gas 2\n", nil, "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseGasSnapshot(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseGasSnapshot (-want +got):\n%s", diff)
			}
		})
	}
}

// formatGo writes results back in go test's format, a "pkg:" line before each change of
// package.
func formatGo(rs []Result) string {
	var b strings.Builder
	pkg := ""
	for _, r := range rs {
		if r.Pkg != pkg {
			fmt.Fprintf(&b, "pkg: %s\n", r.Pkg)
			pkg = r.Pkg
		}
		name := r.Name
		if r.Procs > 0 {
			name += "-" + strconv.Itoa(r.Procs)
		}
		fmt.Fprintf(&b, "%s\t%d", name, r.N)
		for _, m := range r.Metrics {
			fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(m.Value, 'g', -1, 64), m.Unit)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzParseGoBench: any input parses without panic, and what it yields reads back the same
// once written in go test's format.
func FuzzParseGoBench(f *testing.F) {
	f.Add(sampleGo)
	f.Add("BenchmarkA-2\tlog line\n 1 5 ns/op 3 p99-ms/x\n")
	f.Add("pkg: a:b\nBenchmarkX-1-2 0 1e-3 ns/op\n")
	f.Fuzz(func(t *testing.T, in string) {
		run, err := ParseGoBench(strings.NewReader(in))
		if err != nil {
			return
		}
		again, err := ParseGoBench(strings.NewReader(formatGo(run.Results)))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(run.Results, again.Results, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("results changed when written and read back (-first +second):\n%s", diff)
		}
	})
}

// FuzzParseGasSnapshot: any input parses or fails without panic, and a parsed snapshot reads
// back the same once written in forge's format.
func FuzzParseGasSnapshot(f *testing.F) {
	f.Add("A:t() (gas: 68592)\nB:f(uint64) (runs: 256, μ: 74313, ~: 74310)\n")
	f.Add("I:invariant_x() (runs: 64, calls: 2048, reverts: 0)")
	f.Add("A:t() (gas: 1, gas: 2)")
	keyOf := map[string]string{}
	for k, u := range gasKeys {
		keyOf[u] = k
	}
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := ParseGasSnapshot(strings.NewReader(in))
		if err != nil {
			return
		}
		var b strings.Builder
		for _, r := range rs {
			var kv []string
			for _, m := range r.Metrics {
				kv = append(kv, fmt.Sprintf("%s: %d", keyOf[m.Unit], uint64(m.Value)))
			}
			fmt.Fprintf(&b, "%s (%s)\n", r.Name, strings.Join(kv, ", "))
		}
		again, err := ParseGasSnapshot(strings.NewReader(b.String()))
		if err != nil {
			t.Fatalf("written back %q: %v", b.String(), err)
		}
		if diff := cmp.Diff(rs, again, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("snapshot changed when written and read back (-first +second):\n%s", diff)
		}
	})
}
