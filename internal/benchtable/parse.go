package benchtable

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxLine bounds one line of input; a longer line is an error rather than a silent cut.
const maxLine = 1 << 20

// Metric is one value a benchmark reported, with its unit as printed ("ns/op", "p99-ms",
// "events/s", "gas").
type Metric struct {
	Value float64
	Unit  string
}

// Result is one benchmark result line.
type Result struct {
	// Pkg is the import path from the preceding "pkg:" line, or GasSnapshot for a line of
	// a forge gas snapshot.
	Pkg string
	// Name is the full benchmark name without the GOMAXPROCS suffix, such as
	// "BenchmarkEnvelopeSign/ed25519/raw", or "Contract:test()" in a gas snapshot.
	Name string
	// Procs is the GOMAXPROCS suffix of the name ("-2"), 0 when there was none.
	Procs int
	// N is the number of iterations the benchmark ran.
	N       int64
	Metrics []Metric
}

// Metric returns the value of unit in r and whether r reported it.
func (r Result) Metric(unit string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Unit == unit {
			return m.Value, true
		}
	}
	return 0, false
}

// Run is what one `go test -bench` output holds.
type Run struct {
	GOOS, GOARCH, CPU string
	Results           []Result
	// Skipped and Failed list benchmarks that reported "--- SKIP" or "--- FAIL", as
	// "<import path> <name>", so a missing figure can say why it is missing.
	Skipped, Failed []string
}

// ParseGoBench reads the standard text output of `go test -bench` (any number of packages).
// Lines that are not results (PASS, ok, logs) are ignored. When a benchmark prints while it
// runs, its name and its figures end up on different lines; the figures are then credited to
// the last name seen.
func ParseGoBench(r io.Reader) (*Run, error) {
	run := &Run{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	var pkg, pending string
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.ContainsAny(k, " \t") {
			switch k {
			case "pkg":
				pkg, pending = strings.TrimSpace(v), ""
				continue
			case "goos":
				run.GOOS = strings.TrimSpace(v)
				continue
			case "goarch":
				run.GOARCH = strings.TrimSpace(v)
				continue
			case "cpu":
				run.CPU = strings.TrimSpace(v)
				continue
			}
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) >= 3 && (fields[0] == "---" && (fields[1] == "SKIP:" || fields[1] == "FAIL:")) && strings.HasPrefix(fields[2], "Benchmark") {
			name, _ := splitProcs(fields[2])
			if fields[1] == "SKIP:" {
				run.Skipped = append(run.Skipped, pkg+" "+name)
			} else {
				run.Failed = append(run.Failed, pkg+" "+name)
			}
			continue
		}
		if strings.HasPrefix(fields[0], "Benchmark") {
			name, procs := splitProcs(fields[0])
			if res, ok := parseFigures(fields[1:]); ok {
				res.Pkg, res.Name, res.Procs = pkg, name, procs
				run.Results = append(run.Results, res)
				pending = ""
			} else {
				pending = fields[0]
			}
			continue
		}
		if pending != "" {
			if res, ok := parseFigures(fields); ok {
				res.Pkg = pkg
				res.Name, res.Procs = splitProcs(pending)
				run.Results = append(run.Results, res)
				pending = ""
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read benchmark output: %w", err)
	}
	return run, nil
}

// splitProcs splits "BenchmarkX/sub-2" into "BenchmarkX/sub" and 2.
func splitProcs(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name, 0
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n <= 0 || name[i+1] == '+' {
		return name, 0
	}
	return name[:i], n
}

// parseFigures reads "N v1 unit1 v2 unit2 ...": the iteration count and at least one metric.
func parseFigures(f []string) (Result, bool) {
	if len(f) < 3 || len(f)%2 == 0 {
		return Result{}, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 {
		return Result{}, false
	}
	res := Result{N: n, Metrics: make([]Metric, 0, len(f)/2)}
	for i := 1; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Result{}, false
		}
		res.Metrics = append(res.Metrics, Metric{Value: v, Unit: f[i+1]})
	}
	return res, true
}

// GasSnapshot is the Pkg of results read from a forge gas snapshot.
const GasSnapshot = ".gas-snapshot"

// gasKeys maps the keys of a gas snapshot line to metric units: a plain test reports its
// gas, a fuzz test the mean (μ) and median (~) over its runs, an invariant test its runs,
// calls and reverts.
var gasKeys = map[string]string{
	"gas": "gas", "μ": "gas-mean", "~": "gas-median",
	"runs": "runs", "calls": "calls", "reverts": "reverts",
}

// maxExact is the largest integer a float64 holds exactly: far above any block's gas.
const maxExact = 1 << 53

// ParseGasSnapshot reads a gas snapshot as `forge snapshot` writes it, one test per line:
//
//	Contract:test_name() (gas: 68592)
//	Contract:testFuzz_x(uint64) (runs: 256, μ: 74313, ~: 74310)
//
// Any other line is an error: the format is forge's, and a change in it must not pass unseen.
func ParseGasSnapshot(r io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		res, err := parseGasLine(line)
		if err != nil {
			return nil, fmt.Errorf("gas snapshot line %d: %w", ln, err)
		}
		out = append(out, res)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read gas snapshot: %w", err)
	}
	return out, nil
}

func parseGasLine(line string) (Result, error) {
	i := strings.LastIndex(line, " (")
	if i <= 0 || !strings.HasSuffix(line, ")") {
		return Result{}, fmt.Errorf("%q: want \"Contract:test() (gas: N)\"", line)
	}
	name, list := strings.TrimSpace(line[:i]), line[i+2:len(line)-1]
	if c, t, ok := strings.Cut(name, ":"); !ok || c == "" || t == "" || strings.ContainsAny(name, " \t") {
		return Result{}, fmt.Errorf("%q: test name is not Contract:test", name)
	}
	res := Result{Pkg: GasSnapshot, Name: name, N: 1}
	for _, kv := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ": ")
		unit, known := gasKeys[k]
		if !ok || !known {
			return Result{}, fmt.Errorf("%q: unknown figure %q", line, kv)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return Result{}, fmt.Errorf("%q: %s: %w", line, k, err)
		}
		if n > maxExact {
			return Result{}, fmt.Errorf("%q: %s %d is past what a float64 holds exactly", line, k, n)
		}
		if _, dup := res.Metric(unit); dup {
			return Result{}, fmt.Errorf("%q: %s given twice", line, k)
		}
		res.Metrics = append(res.Metrics, Metric{Value: float64(n), Unit: unit})
	}
	return res, nil
}
