package benchtable

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Dim is the dimension of a figure, read from its unit.
type Dim int

// The dimensions a figure can have. Time is in seconds, Rate per second, Gas in gas, Ether
// in ETH (what an attack puts in, in the Sybil simulation), Bytes in bytes (a node's memory
// and disk under load), Score a measure of quality from 0 to 1, higher being better (nDCG and
// recall of a ranking on a judged set).
const (
	Time Dim = iota + 1
	Rate
	Gas
	Ether
	Bytes
	Score
)

// isScore says whether a unit's name (its last dash-separated word before any slash) is a
// ranking-quality score: "ndcg10", "legacy-ndcg10/natural", "recall10".
func isScore(base string) bool {
	name := base[strings.LastIndexByte(base, '-')+1:]
	for _, prefix := range []string{"ndcg", "recall"} {
		if digits, ok := strings.CutPrefix(name, prefix); ok && strings.Trim(digits, "0123456789") == "" {
			return true
		}
	}
	return false
}

// DimOf returns the dimension of a metric unit and the factor that turns a value in that
// unit into the dimension's base unit: "ns/op" and "follow-ns" are nanoseconds, "p99-ms" and
// "p99-ms/text" milliseconds, "refresh-s" seconds, "events/s" a rate, "gas…" gas, "db-MB"
// megabytes (10^6 bytes), "ndcg10", "recall10/natural" and "legacy-ndcg10" scores.
func DimOf(unit string) (Dim, float64, error) {
	switch {
	case unit == "ns/op":
		return Time, 1e-9, nil
	case strings.HasPrefix(unit, "gas"):
		return Gas, 1, nil
	case strings.HasSuffix(unit, "-eth"):
		return Ether, 1, nil
	case strings.HasSuffix(unit, "/s"):
		return Rate, 1, nil
	}
	base, _, _ := strings.Cut(unit, "/")
	if isScore(base) {
		return Score, 1, nil
	}
	if i := strings.LastIndexByte(base, '-'); i >= 0 {
		switch base[i+1:] {
		case "ns":
			return Time, 1e-9, nil
		case "us", "µs":
			return Time, 1e-6, nil
		case "ms":
			return Time, 1e-3, nil
		case "s":
			return Time, 1, nil
		case "MB":
			return Bytes, 1e6, nil
		}
	}
	return 0, 0, fmt.Errorf("unit %q has no known dimension (ns/op, *-ns, *-ms, *-s, */s, gas*, *-eth, *-MB, ndcg*, recall*)", unit)
}

// Line is one row of the built table.
type Line struct {
	Row Row
	Ref Reference
	// Dim is the row's dimension; Value, RefLo and RefHi are in its base unit (the
	// reference converted to it: a time per operation becomes a rate for a rate row).
	Dim          Dim
	Value        float64
	RefLo, RefHi float64
	// RatioLo and RatioHi are Value/RefHi and Value/RefLo: equal unless the reference is a
	// published range. For a Score they are the differences Value − RefHi and Value − RefLo
	// instead: a score is compared by how much it gains, and its reference may be 0 (a
	// search that finds nothing).
	RatioLo, RatioHi float64
	// Met reports the target, when the row has one.
	Met *bool
}

// Table is a built benchmark table.
type Table struct {
	Lines             []Line
	GOOS, GOARCH, CPU string
	// Procs is GOMAXPROCS during the Go benchmarks.
	Procs int
}

// ErrIncomplete reports a run or a spec from which no complete table can be built; the
// error's text lists every problem on one line.
var ErrIncomplete = errors.New("benchtable: incomplete")

// Build pairs every row of spec with its reference in run and gas (the results of
// ParseGoBench and ParseGasSnapshot). A figure measured more than once (go test -count) counts
// with its median. Build fails, naming each problem, when a source is missing from the
// input, a row has no reference, a unit has no dimension or does not match its reference's,
// a row with a target measures a time aggregate whose kinds the run breaks out ("p99-ms"
// beside "p99-ms/text": the aggregate could meet a target a kind misses), or the run holds a Go
// benchmark that the spec does not use.
func Build(spec Spec, run *Run, gas []Result) (*Table, error) {
	t := &Table{GOOS: run.GOOS, GOARCH: run.GOARCH, CPU: run.CPU}
	values := map[Source][]float64{}
	benches := map[[2]string]bool{} // Go benchmarks of the run: package, name
	var order [][2]string
	add := func(r Result, pkg string) {
		for _, m := range r.Metrics {
			k := Source{pkg, r.Name, m.Unit}
			values[k] = append(values[k], m.Value)
		}
	}
	for _, r := range run.Results {
		pkg := shortPkg(spec.Module, r.Pkg)
		add(r, pkg)
		if k := [2]string{pkg, r.Name}; !benches[k] {
			benches[k] = true
			order = append(order, k)
		}
		if t.Procs == 0 {
			t.Procs = r.Procs
		}
	}
	for _, r := range gas {
		add(r, GasSnapshot)
	}
	var problems []string
	used := map[[2]string]bool{}
	why := func(s Source) string {
		full := spec.Module + "/" + s.Pkg + " " + s.Bench
		switch {
		case slices.Contains(run.Failed, full):
			return "it failed"
		case slices.Contains(run.Skipped, full):
			return "it was skipped"
		case s.Pkg == GasSnapshot:
			return "not in the gas snapshot"
		case benchesHave(benches, s):
			return "no " + s.Unit + " metric"
		}
		return "not in the benchmark output"
	}
	// figure returns the median of s in the run, in the base unit of its dimension.
	figure := func(s Source) (Dim, float64, bool) {
		used[[2]string{s.Pkg, s.Bench}] = true
		d, scale, err := DimOf(s.Unit)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %s: %v", s.Pkg, s.Bench, err))
			return 0, 0, false
		}
		vs := values[s]
		if len(vs) == 0 {
			problems = append(problems, fmt.Sprintf("%s %s %s: %s", s.Pkg, s.Bench, s.Unit, why(s)))
			return 0, 0, false
		}
		return d, median(vs) * scale, true
	}
	for _, row := range spec.Rows {
		if row.Target != nil {
			if kinds := kindsOf(values, row.From); len(kinds) > 0 {
				problems = append(problems, fmt.Sprintf("row %q claims a target for %s, an aggregate of kinds (%s): give each kind a row with the target, and the aggregate none",
					row.Figure, row.From.Unit, strings.Join(kinds, ", ")))
				continue
			}
		}
		l := Line{Row: row}
		d, v, ok := figure(row.From)
		if row.Alone {
			if row.Ref != "" || row.Target != nil {
				problems = append(problems, fmt.Sprintf("row %q is compared with nothing but names a reference or a target", row.Figure))
				continue
			}
			if ok {
				l.Dim, l.Value = d, v
				t.Lines = append(t.Lines, l)
			}
			continue
		}
		ref, known := spec.References[row.Ref]
		if known && ref.Receipts && row.From.Pkg == GasSnapshot {
			problems = append(problems, fmt.Sprintf("row %q: a forge snapshot's figure cannot be compared with %q, measured from receipts", row.Figure, ref.Label))
			ok = false
		}
		switch {
		case row.Ref == "":
			problems = append(problems, fmt.Sprintf("row %q has no reference", row.Figure))
			ok = false
		case !known:
			problems = append(problems, fmt.Sprintf("row %q: unknown reference %q", row.Figure, row.Ref))
			ok = false
		case ref.Published != nil:
			l.RefLo, l.RefHi = ref.Published.Lo, ref.Published.Hi
			if ok && d != Gas {
				problems = append(problems, fmt.Sprintf("row %q: a published gas figure cannot be the reference of %s", row.Figure, row.From.Unit))
				ok = false
			}
		default:
			rd, rv, rok := figure(ref.From)
			if !ok || !rok {
				ok = false
				break
			}
			switch {
			case rd == d:
			case rd == Time && d == Rate, rd == Rate && d == Time:
				rv = 1 / rv // one per operation becomes operations per second, or back
			default:
				problems = append(problems, fmt.Sprintf("row %q: %s cannot be compared with %s", row.Figure, row.From.Unit, ref.From.Unit))
				ok = false
			}
			l.RefLo, l.RefHi = rv, rv
		}
		if !ok {
			continue
		}
		if d == Score {
			if tg := row.Target; tg != nil && tg.Ratio {
				problems = append(problems, fmt.Sprintf("row %q: a score is compared by difference, so its target bounds the value, not a ratio", row.Figure))
				continue
			}
			l.Ref, l.Dim, l.Value = ref, d, v
			l.RatioLo, l.RatioHi = v-l.RefHi, v-l.RefLo
			if tg := row.Target; tg != nil {
				met := (tg.Max == 0 || v <= tg.Max) && (tg.Min == 0 || v >= tg.Min)
				l.Met = &met
			}
			t.Lines = append(t.Lines, l)
			continue
		}
		if !(l.RefLo > 0) || !(l.RefHi > 0) || math.IsInf(l.RefHi, 0) {
			problems = append(problems, fmt.Sprintf("row %q: reference %q is %v, no ratio", row.Figure, ref.Label, l.RefLo))
			continue
		}
		l.Ref, l.Dim, l.Value = ref, d, v
		l.RatioLo, l.RatioHi = v/l.RefHi, v/l.RefLo
		if tg := row.Target; tg != nil {
			x := v
			if tg.Ratio {
				x = l.RatioHi
			}
			met := (tg.Max == 0 || x <= tg.Max) && (tg.Min == 0 || x >= tg.Min)
			l.Met = &met
		}
		t.Lines = append(t.Lines, l)
	}
	for _, k := range order {
		if !used[k] {
			problems = append(problems, fmt.Sprintf("%s %s: in the run but in no row or reference (add it to the spec)", k[0], k[1]))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrIncomplete, strings.Join(problems, "; "))
	}
	return t, nil
}

// kindsOf lists the units of s's benchmark that break s's time figure down by kind
// ("p99-ms/text" for "p99-ms"), sorted: a figure they break down is an aggregate of them, a
// tail of several distributions that can meet a target one of them misses. (A score over a
// judged set, ndcg10 beside ndcg10/natural, is a mean an issue may set a target for itself.)
func kindsOf(values map[Source][]float64, s Source) []string {
	if d, _, err := DimOf(s.Unit); err != nil || d != Time || strings.Contains(s.Unit, "/") {
		return nil
	}
	var kinds []string
	for k := range values {
		if k.Pkg == s.Pkg && k.Bench == s.Bench && strings.HasPrefix(k.Unit, s.Unit+"/") {
			kinds = append(kinds, k.Unit)
		}
	}
	slices.Sort(kinds)
	return kinds
}

func benchesHave(benches map[[2]string]bool, s Source) bool {
	return benches[[2]string{s.Pkg, s.Bench}]
}

// shortPkg is an import path relative to the module ("registry", "internal/chain").
func shortPkg(module, pkg string) string {
	if rest, ok := strings.CutPrefix(pkg, module+"/"); ok {
		return rest
	}
	return pkg
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Meta is what the table's heading says about the run besides the machine.
type Meta struct {
	Date, Commit, GoVersion string
	// By is the command that ran the benchmarks ("make bench" when empty).
	By string
}

// Markdown writes the table with a short heading that says when, where and on what it ran.
func (t *Table) Markdown(w io.Writer, m Meta) error {
	var b strings.Builder
	b.WriteString("# Benchmark results\n\n")
	by := m.By
	if by == "" {
		by = "make bench"
	}
	fmt.Fprintf(&b, "Written by `%s` on %s at commit %s: %s on %s/%s, %s, GOMAXPROCS %d.\n",
		by, m.Date, m.Commit, m.GoVersion, t.GOOS, t.GOARCH, orUnknown(t.CPU), t.Procs)
	b.WriteString("Each figure is compared with a reference measured in the same run (ERC-8004's gas, and the ERC-8183 reference's, are published figures).\n")
	b.WriteString("Ratio = value ÷ reference: below 1 is cheaper than the reference, except for a rate (/s), where above 1 is faster.\n")
	b.WriteString("A score (nDCG, recall: 0 to 1, higher is better) is compared by difference instead: value − reference, shown signed.\n")
	b.WriteString("The machine is shared, so the figures are noisy: the two calibration rows (one primitive measured twice) show how much.\n\n")
	b.WriteString("| figure | benchmark | value | reference | reference value | ratio | target, note |\n")
	b.WriteString("| --- | --- | ---: | --- | ---: | ---: | --- |\n")
	for _, l := range t.Lines {
		src := fmt.Sprintf("`%s` %s %s", l.Row.From.Pkg, strings.TrimPrefix(l.Row.From.Bench, "Benchmark"), l.Row.From.Unit)
		var note []string
		if tg := l.Row.Target; tg != nil {
			verdict := "met"
			if !*l.Met {
				verdict = "**missed**"
			}
			note = append(note, tg.Text+": "+verdict)
		}
		if l.Row.Note != "" {
			note = append(note, l.Row.Note)
		}
		refLabel, refValue, ratio := cell(l.Ref.Label), FormatRange(l.Dim, l.RefLo, l.RefHi), FormatRange(0, l.RatioLo, l.RatioHi)
		if l.Dim == Score {
			ratio = FormatDiff(l.RatioLo, l.RatioHi)
		}
		if l.Row.Alone {
			refLabel, refValue, ratio = "", "", ""
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n",
			cell(l.Row.Figure), cell(src), FormatValue(l.Dim, l.Value), refLabel, refValue, ratio, cell(strings.Join(note, "; ")))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown CPU"
	}
	return s
}

// cell escapes what would end a markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// FormatRange prints lo to hi as FormatValue does, the unit once when both ends share it:
// "131,528–213,372 gas", "900 µs–1.2 ms"; a single value when lo equals hi.
func FormatRange(d Dim, lo, hi float64) string {
	a, b := FormatValue(d, lo), FormatValue(d, hi)
	if a == b {
		return a
	}
	i, j := strings.LastIndexByte(a, ' '), strings.LastIndexByte(b, ' ')
	if i > 0 && j > 0 && a[i:] == b[j:] {
		a = a[:i]
	}
	return a + "–" + b
}

// FormatDiff prints the differences lo to hi signed, as FormatRange does: "+0.54", "-0.02",
// "+0.1–+0.2".
func FormatDiff(lo, hi float64) string {
	signed := func(x float64) string {
		s := FormatNumber(x)
		if x >= 0 {
			s = "+" + s
		}
		return s
	}
	if a, b := signed(lo), signed(hi); a != b {
		return a + "–" + b
	}
	return signed(lo)
}

// FormatValue prints v (in the base unit of d) with three significant digits and the unit
// that suits its size: "850 ns", "12.3 µs", "4.56 ms", "1.23 s", "11,344/s", "68,592 gas",
// "312 MB".
// A zero Dim, or a Score, prints a bare number.
func FormatValue(d Dim, v float64) string {
	switch d {
	case Time:
		switch a := math.Abs(v); {
		case a == 0:
			return "0 s"
		case a < 1e-6:
			return FormatNumber(v*1e9) + " ns"
		case a < 1e-3:
			return FormatNumber(v*1e6) + " µs"
		case a < 1:
			return FormatNumber(v*1e3) + " ms"
		}
		return FormatNumber(v) + " s"
	case Rate:
		return FormatNumber(v) + "/s"
	case Gas:
		return FormatNumber(v) + " gas"
	case Ether:
		return FormatNumber(v) + " ETH"
	case Bytes:
		return FormatNumber(v/1e6) + " MB"
	}
	return FormatNumber(v)
}

// FormatNumber prints x with three significant digits, and whole numbers with thousands
// separators from 1,000 up, never in exponent form above 1e-4.
func FormatNumber(x float64) string {
	a := math.Abs(x)
	if a < 999.5 {
		return strconv.FormatFloat(x, 'g', 3, 64)
	}
	s := strconv.FormatFloat(math.Round(a), 'f', 0, 64)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if x < 0 {
		return "-" + string(out)
	}
	return string(out)
}
