package benchtable

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fullRun is a run that holds every source the Surety spec names, each with value v in its
// own unit, split into Go results and gas snapshot lines as make bench produces them.
func fullRun(t *testing.T, spec Spec, v float64) (*Run, []Result) {
	t.Helper()
	var sources []Source
	for _, r := range spec.Rows {
		sources = append(sources, r.From)
	}
	for _, ref := range spec.References {
		if ref.Published == nil {
			sources = append(sources, ref.From)
		}
	}
	run := &Run{GOOS: "linux", GOARCH: "amd64", CPU: "test CPU"}
	var gas []Result
	for _, s := range sources {
		m := Metric{Value: v, Unit: s.Unit}
		if s.Pkg == GasSnapshot {
			gas = append(gas, Result{Pkg: GasSnapshot, Name: s.Bench, N: 1, Metrics: []Metric{m}})
			continue
		}
		run.Results = append(run.Results, Result{Pkg: spec.Module + "/" + s.Pkg, Name: s.Bench, Procs: 2, N: 1, Metrics: []Metric{m}})
	}
	return run, gas
}

func TestBuildSurety(t *testing.T) {
	for name, spec := range map[string]Spec{"surety": Surety(), "large": SuretyLarge()} {
		t.Run(name, func(t *testing.T) { checkSpecBuilds(t, spec) })
	}
}

// checkSpecBuilds builds spec from a run that holds every figure it names, and checks every
// line and the markdown.
func checkSpecBuilds(t *testing.T, spec Spec) {
	run, gas := fullRun(t, spec, 1)
	tab, err := Build(spec, run, gas)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Lines) != len(spec.Rows) {
		t.Fatalf("%d lines for %d rows", len(tab.Lines), len(spec.Rows))
	}
	for _, l := range tab.Lines {
		if l.Row.Alone {
			if !(l.Value > 0) || l.RatioLo != 0 || l.RatioHi != 0 || l.Ref.Label != "" {
				t.Errorf("%s, compared with nothing: value %v, ratio %v–%v, reference %q", l.Row.Figure, l.Value, l.RatioLo, l.RatioHi, l.Ref.Label)
			}
			continue
		}
		if l.Dim == Score { // compared by difference: equal figures differ by 0
			if l.Value != 1 || l.RatioLo != 0 || l.RatioHi != 0 {
				t.Errorf("%s: score %v, difference %v–%v", l.Row.Figure, l.Value, l.RatioLo, l.RatioHi)
			}
			continue
		}
		if !(l.Value > 0) || !(l.RatioLo > 0) || !(l.RatioHi >= l.RatioLo) || math.IsInf(l.RatioHi, 0) {
			t.Errorf("%s: value %v, ratio %v–%v", l.Row.Figure, l.Value, l.RatioLo, l.RatioHi)
		}
	}
	var md strings.Builder
	if err := tab.Markdown(&md, Meta{Date: "2026-01-02", Commit: "abc", GoVersion: "go1.26"}); err != nil {
		t.Fatal(err)
	}
	tableLines := 0
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "|") {
			tableLines++
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 8 {
				t.Errorf("line has %d cell borders, want 8: %s", n, line)
			}
		}
	}
	if tableLines != len(spec.Rows)+2 {
		t.Errorf("markdown has %d table lines, want %d", tableLines, len(spec.Rows)+2)
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| createJob |") && !strings.Contains(line, "|  |  |  |") {
			t.Errorf("a step of the lifecycle shows a reference or a ratio: %s", line)
		}
	}
}

// TestSpecComparesLikeWithLike: the ERC-8183 reference's figure is a whole lifecycle measured
// from receipts, so only whole paths measured from receipts are compared with it: no single
// step (its steps are not published) and no forge figure (no intrinsic costs, warm storage).
func TestSpecComparesLikeWithLike(t *testing.T) {
	spec := Surety()
	whole := map[string]bool{"gas/lifecycle": true, "gas-first": true, "gas/path": true}
	steps := 0
	for _, r := range spec.Rows {
		ref := spec.References[r.Ref]
		if r.From.Pkg == GasSnapshot && ref.Receipts {
			t.Errorf("row %q: a forge figure compared with %q, measured from receipts", r.Figure, ref.Label)
		}
		if strings.HasPrefix(r.Ref, "erc8183") && !whole[r.From.Unit] {
			t.Errorf("row %q (%s): not a whole path, compared with the reference's whole lifecycle", r.Figure, r.From.Unit)
		}
		if r.From.Bench == "BenchmarkJobLifecycleGas" && !whole[r.From.Unit] {
			steps++
			if !r.Alone {
				t.Errorf("row %q: a step, not Alone", r.Figure)
			}
		}
	}
	if steps != 5 {
		t.Errorf("%d lifecycle steps in the table, want 5", steps)
	}
}

func TestBuildFailsOnAGap(t *testing.T) {
	spec := Surety()
	tests := []struct {
		name   string
		change func(run *Run, gas *[]Result, spec *Spec)
		want   string
	}{
		{"missing figure", func(run *Run, _ *[]Result, _ *Spec) {
			run.Results = dropBench(run.Results, "BenchmarkPropagation20")
		}, "registry BenchmarkPropagation20 p50-ms: not in the benchmark output"},
		{"skipped figure", func(run *Run, _ *[]Result, _ *Spec) {
			run.Results = dropBench(run.Results, "BenchmarkPostRoundTrip")
			run.Skipped = append(run.Skipped, spec.Module+"/cmd/surety BenchmarkPostRoundTrip")
		}, "cmd/surety BenchmarkPostRoundTrip p50-ms: it was skipped"},
		{"missing reference", func(run *Run, _ *[]Result, _ *Spec) {
			run.Results = dropBench(run.Results, "BenchmarkSQLiteInsert")
		}, "internal/benchref BenchmarkSQLiteInsert ns/op: not in the benchmark output"},
		{"missing metric", func(run *Run, _ *[]Result, _ *Spec) {
			for i, r := range run.Results {
				if r.Name == "BenchmarkSearch" && r.Metrics[0].Unit == "p99-ms/cap" {
					run.Results[i].Metrics[0].Unit = "p99-ms/capability"
				}
			}
		}, "registry BenchmarkSearch p99-ms/cap: no p99-ms/cap metric"},
		{"missing gas", func(_ *Run, gas *[]Result, _ *Spec) { *gas = nil },
			".gas-snapshot RootAnchorTest:test_anchor_recordsRootAndEmits() gas: not in the gas snapshot"},
		{"unknown benchmark", func(run *Run, _ *[]Result, _ *Spec) {
			run.Results = append(run.Results, Result{Pkg: spec.Module + "/escrow", Name: "BenchmarkNew", N: 1, Metrics: []Metric{{1, "ns/op"}}})
		}, "escrow BenchmarkNew: in the run but in no row or reference"},
		{"row without reference", func(_ *Run, _ *[]Result, s *Spec) { s.Rows[0].Ref = "" }, "has no reference"},
		{"forge figure against receipts", func(_ *Run, _ *[]Result, s *Spec) {
			r := rowNamed(t, s, "SuretyHook dispute path, forge")
			r.Alone, r.Ref = false, "erc8183"
		}, "cannot be compared with"},
		{"a row alone naming a reference", func(_ *Run, _ *[]Result, s *Spec) { rowNamed(t, s, "createJob").Ref = "erc8183" }, "compared with nothing but names"},
		{"unknown reference", func(_ *Run, _ *[]Result, s *Spec) { s.Rows[0].Ref = "nope" }, `unknown reference "nope"`},
		{"published gas for a time", func(_ *Run, _ *[]Result, s *Spec) { s.Rows[0].Ref = "erc8004" }, "cannot be the reference"},
		{"gas against a time", func(_ *Run, _ *[]Result, s *Spec) { s.Rows[len(s.Rows)-1].Ref = "echo" }, "gas cannot be compared with ns/op"},
		{"unit without dimension", func(run *Run, _ *[]Result, s *Spec) {
			s.Rows[0].From.Unit = "B/op"
			run.Results = append(run.Results, Result{Pkg: spec.Module + "/identity", Name: s.Rows[0].From.Bench, Metrics: []Metric{{1, "B/op"}}})
		}, `unit "B/op" has no known dimension`},
		{"target on an aggregate of kinds", func(_ *Run, _ *[]Result, s *Spec) {
			rowNamed(t, s, "search 100k cards, p99 (every kind, both modes)").Target = maxTime("p99 ≤ 5 ms", 0.005)
		}, "an aggregate of kinds (p99-ms/all, p99-ms/cap"},
		{"zero reference", func(run *Run, _ *[]Result, _ *Spec) {
			for i, r := range run.Results {
				if r.Name == "BenchmarkEchoHandler" {
					run.Results[i].Metrics[0].Value = 0
				}
			}
		}, "no ratio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Surety()
			run, gas := fullRun(t, s, 1)
			tt.change(run, &gas, &s)
			_, err := Build(s, run, gas)
			if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrIncomplete mentioning %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func rowNamed(t *testing.T, s *Spec, figure string) *Row {
	t.Helper()
	for i := range s.Rows {
		if s.Rows[i].Figure == figure {
			return &s.Rows[i]
		}
	}
	t.Fatalf("no row %q", figure)
	return nil
}

func dropBench(rs []Result, name string) []Result {
	var out []Result
	for _, r := range rs {
		if r.Name != name {
			out = append(out, r)
		}
	}
	return out
}

func TestBuildRatios(t *testing.T) {
	spec := Spec{
		Module: "m",
		References: map[string]Reference{
			"insert": {Label: "insert", From: Source{"ref", "BenchmarkInsert", "ns/op"}},
			"pub":    {Label: "published", Published: &Range{Lo: 100, Hi: 200}},
		},
		Rows: []Row{
			{Figure: "p99", From: Source{"a", "BenchmarkA", "p99-ms"}, Ref: "insert", Target: &Target{Text: "≤ 10 ms", Max: 0.010}},
			{Figure: "rate", From: Source{"a", "BenchmarkB", "events/s"}, Ref: "insert", Target: &Target{Text: "≥ 2000/s", Min: 2000}},
			{Figure: "gas", From: Source{"a", "BenchmarkC", "gas-x"}, Ref: "pub", Target: &Target{Text: "ratio ≤ 0.9", Max: 0.9, Ratio: true}},
			{Figure: "median", From: Source{"a", "BenchmarkD", "follow-ns"}, Ref: "insert"},
		},
	}
	run := &Run{Results: []Result{
		{Pkg: "m/ref", Name: "BenchmarkInsert", Metrics: []Metric{{20_000, "ns/op"}}}, // 20 µs: 50,000/s
		{Pkg: "m/a", Name: "BenchmarkA", Metrics: []Metric{{12, "p99-ms"}}},
		{Pkg: "m/a", Name: "BenchmarkB", Metrics: []Metric{{10_000, "events/s"}}},
		{Pkg: "m/a", Name: "BenchmarkC", Metrics: []Metric{{150, "gas-x"}}},
		{Pkg: "m/a", Name: "BenchmarkD", Metrics: []Metric{{1000, "follow-ns"}}},
		{Pkg: "m/a", Name: "BenchmarkD", Metrics: []Metric{{5000, "follow-ns"}}},
		{Pkg: "m/a", Name: "BenchmarkD", Metrics: []Metric{{2000, "follow-ns"}}},
	}}
	tab, err := Build(spec, run, nil)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Value, RefLo, RefHi, RatioLo, RatioHi float64
		Met                                   *bool
	}
	yes, no := true, false
	want := []got{
		{0.012, 20e-6, 20e-6, 600, 600, &no},
		{10_000, 50_000, 50_000, 0.2, 0.2, &yes},
		{150, 100, 200, 0.75, 1.5, &no},
		{2e-6, 20e-6, 20e-6, 0.1, 0.1, nil},
	}
	var have []got
	for _, l := range tab.Lines {
		have = append(have, got{l.Value, l.RefLo, l.RefHi, l.RatioLo, l.RatioHi, l.Met})
	}
	if diff := cmp.Diff(want, have, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) })); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestDimOf(t *testing.T) {
	tests := []struct {
		unit  string
		dim   Dim
		scale float64
	}{
		{"ns/op", Time, 1e-9},
		{"follow-ns", Time, 1e-9},
		{"wait-us", Time, 1e-6},
		{"p99-ms", Time, 1e-3},
		{"p99-ms/text+cap", Time, 1e-3},
		{"refresh-s", Time, 1},
		{"first-refresh-s", Time, 1},
		{"events/s", Rate, 1},
		{"gas", Gas, 1},
		{"gas/lifecycle", Gas, 1},
		{"gas-first", Gas, 1},
		{"rss-peak-MB", Bytes, 1e6},
		{"db-bound-MB", Bytes, 1e6},
		{"B/op", 0, 0},
		{"allocs/op", 0, 0},
		{"iterations", 0, 0},
		{"p99-h", 0, 0},
		{"ndcg10", Score, 1},
		{"ndcg10/natural", Score, 1},
		{"legacy-ndcg10/heldout", Score, 1},
		{"recall10", Score, 1},
		{"legacy-recall10", Score, 1},
		{"ndcg", Score, 1},
		{"ndcg10x", 0, 0},
		{"mrecall10", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.unit, func(t *testing.T) {
			d, s, err := DimOf(tt.unit)
			if (err != nil) != (tt.dim == 0) || d != tt.dim || s != tt.scale {
				t.Errorf("DimOf(%q) = %v, %v, %v; want %v, %v", tt.unit, d, s, err, tt.dim, tt.scale)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		dim  Dim
		v    float64
		want string
	}{
		{Time, 850e-9, "850 ns"},
		{Time, 12.34e-6, "12.3 µs"},
		{Time, 4.567e-3, "4.57 ms"},
		{Time, 0.59e-3, "590 µs"},
		{Time, 1.234, "1.23 s"},
		{Time, 15.16, "15.2 s"},
		{Time, 0, "0 s"},
		{Rate, 11344, "11,344/s"},
		{Gas, 68592, "68,592 gas"},
		{Gas, 131528, "131,528 gas"},
		{Bytes, 312.44e6, "312 MB"},
		{Bytes, 1661.5e6, "1,662 MB"},
		{0, 1.176, "1.18"},
		{0, 0.0123, "0.0123"},
		{0, 999.4, "999"},
		{0, 999.6, "1,000"},
		{0, 1234567, "1,234,567"},
		{0, -2500, "-2,500"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.dim, tt.v); got != tt.want {
			t.Errorf("FormatValue(%v, %v) = %q, want %q", tt.dim, tt.v, got, tt.want)
		}
	}
}

func TestFormatRange(t *testing.T) {
	tests := []struct {
		dim    Dim
		lo, hi float64
		want   string
	}{
		{Gas, 131_528, 213_372, "131,528–213,372 gas"},
		{Gas, 68_592, 68_592, "68,592 gas"},
		{Time, 900e-6, 1.2e-3, "900 µs–1.2 ms"},
		{Time, 1e-3, 2e-3, "1–2 ms"},
		{Rate, 1000, 2000, "1,000/s–2,000/s"},
		{0, 0.5, 0.75, "0.5–0.75"},
		{0, 1.004, 1.001, "1"},
	}
	for _, tt := range tests {
		if got := FormatRange(tt.dim, tt.lo, tt.hi); got != tt.want {
			t.Errorf("FormatRange(%v, %v, %v) = %q, want %q", tt.dim, tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestBuildScores: a score is compared with a figure of the same benchmark by difference
// (its reference may be 0: a search that found nothing), and its target is a floor on the
// value; a ratio target on a score is refused.
func TestBuildScores(t *testing.T) {
	spec := Spec{
		Module: "m",
		References: map[string]Reference{
			"legacy":         {Label: "legacy", From: Source{"r", "BenchmarkRelevance", "legacy-ndcg10"}},
			"legacy-natural": {Label: "legacy", From: Source{"r", "BenchmarkRelevance", "legacy-ndcg10/natural"}},
		},
		Rows: []Row{
			{Figure: "all", From: Source{"r", "BenchmarkRelevance", "ndcg10"}, Ref: "legacy", Target: atLeast("≥ 0.80", 0.80)},
			{Figure: "natural", From: Source{"r", "BenchmarkRelevance", "ndcg10/natural"}, Ref: "legacy-natural", Target: atLeast("≥ 0.70", 0.70)},
		},
	}
	run := &Run{Results: []Result{{Pkg: "m/r", Name: "BenchmarkRelevance", N: 1, Metrics: []Metric{
		{0.85, "ndcg10"}, {0.6, "ndcg10/natural"}, {0.262, "legacy-ndcg10"}, {0, "legacy-ndcg10/natural"},
	}}}}
	tab, err := Build(spec, run, nil)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Dim                                   Dim
		Value, RefLo, RefHi, RatioLo, RatioHi float64
		Met                                   bool
	}
	want := []got{{Score, 0.85, 0.262, 0.262, 0.588, 0.588, true}, {Score, 0.6, 0, 0, 0.6, 0.6, false}}
	var have []got
	for _, l := range tab.Lines {
		have = append(have, got{l.Dim, l.Value, l.RefLo, l.RefHi, l.RatioLo, l.RatioHi, *l.Met})
	}
	if diff := cmp.Diff(want, have, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 })); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	var md strings.Builder
	if err := tab.Markdown(&md, Meta{}); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| all | `r` Relevance ndcg10 | 0.85 | legacy | 0.262 | +0.588 | ≥ 0.80: met |", "| natural | `r` Relevance ndcg10/natural | 0.6 | legacy | 0 | +0.6 | ≥ 0.70: **missed** |"} {
		if !strings.Contains(md.String(), row) {
			t.Errorf("markdown lacks %q:\n%s", row, md.String())
		}
	}

	spec.Rows[0].Target = &Target{Text: "2× legacy", Min: 2, Ratio: true}
	if _, err := Build(spec, run, nil); !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "compared by difference") {
		t.Errorf("a ratio target on a score: err = %v", err)
	}
}

func TestFormatDiff(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{0.538, 0.538, "+0.538"},
		{0, 0, "+0"},
		{-0.02, -0.02, "-0.02"},
		{0.1, 0.2, "+0.1–+0.2"},
	}
	for _, tt := range tests {
		if got := FormatDiff(tt.lo, tt.hi); got != tt.want {
			t.Errorf("FormatDiff(%v, %v) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

// TestBuildSuretyLarge: the large run's table builds from a run holding its figures alone
// (no gas), every row with a target one figure of its own.
func TestBuildSuretyLarge(t *testing.T) {
	spec := SuretyLarge()
	run, gas := fullRun(t, spec, 1)
	if len(gas) != 0 {
		t.Fatalf("the large spec names gas: %v", gas)
	}
	tab, err := Build(spec, run, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Lines) != len(spec.Rows) {
		t.Fatalf("%d lines for %d rows", len(tab.Lines), len(spec.Rows))
	}
	for _, r := range spec.Rows {
		if r.Target != nil && r.From.Bench == "BenchmarkSearch" && (r.From.Unit == "p50-ms" || r.From.Unit == "p99-ms") {
			t.Errorf("row %q claims a target from the aggregate of every kind", r.Figure)
		}
	}
}
