package semantic_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

func TestDefaultLoads(t *testing.T) {
	m := semantic.Default()
	if n := m.Len(); n < 30_000 || n > 60_000 {
		t.Errorf("%d stems, want 30k to 60k", n)
	}
	if n := len(semantic.Embedded()); n > 3<<20 {
		t.Errorf("the committed model is %d bytes, over 3 MiB", n)
	}
	for _, w := range []string{"translate", "auditor", "tax", "lawyer", "English", "contract", "security", "blockchain", "pentester"} {
		stem := search.Terms(w)[0]
		if !m.Has(stem) {
			t.Errorf("no trained vector for %q (%q)", w, stem)
		}
	}
	if semantic.Default() != m {
		t.Error("Default loads again")
	}
}

// similarPairs are words a person would take for one another on a card or in a query;
// randomPairs are words with nothing to do with each other. The pairs were written for this
// test, not taken from any judged set.
var similarPairs = [][2]string{
	{"translate", "interpret"}, {"translator", "interpreter"}, {"audit", "inspect"},
	{"tax", "levy"}, {"tax", "VAT"}, {"lawyer", "attorney"}, {"doctor", "physician"},
	{"car", "automobile"}, {"buy", "purchase"}, {"fix", "repair"}, {"invoice", "bill"},
	{"photo", "photograph"}, {"contract", "agreement"}, {"accountant", "bookkeeper"},
	{"software", "program"}, {"lawyer", "counsel"}, {"localisation", "localization"},
	{"teacher", "tutor"}, {"song", "music"}, {"flight", "airplane"}, {"hotel", "lodging"},
	{"illness", "disease"}, {"salary", "wage"}, {"forecast", "prediction"},
}

var randomPairs = [][2]string{
	{"translate", "banana"}, {"audit", "volcano"}, {"tax", "giraffe"}, {"lawyer", "umbrella"},
	{"doctor", "guitar"}, {"car", "poem"}, {"invoice", "elephant"}, {"software", "river"},
	{"contract", "sunset"}, {"accountant", "tulip"}, {"photo", "debt"}, {"teacher", "engine"},
	{"song", "mortgage"}, {"flight", "lettuce"}, {"hotel", "grammar"}, {"salary", "penguin"},
	{"illness", "staircase"}, {"forecast", "violin"}, {"repair", "butterfly"}, {"buy", "glacier"},
}

func cosines(m *semantic.Model, pairs [][2]string) []float64 {
	var out []float64
	for _, p := range pairs {
		out = append(out, float64(semantic.Cosine(m.Vector(search.Terms(p[0])), m.Vector(search.Terms(p[1])))))
	}
	return out
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestSimilarPairsBeatRandom: words of one meaning are clearly nearer each other than words
// taken at random.
func TestSimilarPairsBeatRandom(t *testing.T) {
	m := semantic.Default()
	sim, rnd := cosines(m, similarPairs), cosines(m, randomPairs)
	for i, p := range similarPairs {
		t.Logf("similar %-14s %-14s %.3f", p[0], p[1], sim[i])
	}
	for i, p := range randomPairs {
		t.Logf("random  %-14s %-14s %.3f", p[0], p[1], rnd[i])
	}
	maxRandom := slices.Max(rnd)
	above := 0
	for _, s := range sim {
		if s > maxRandom {
			above++
		}
	}
	t.Logf("similar: mean %.3f, median %.3f; random: mean %.3f, max %.3f; %d of %d similar pairs above every random one",
		mean(sim), median(sim), mean(rnd), maxRandom, above, len(sim))
	if mean(sim)-mean(rnd) < 0.3 {
		t.Errorf("similar pairs' mean cosine %.3f is not 0.3 above random pairs' %.3f", mean(sim), mean(rnd))
	}
	if above*4 < len(sim)*3 {
		t.Errorf("only %d of %d similar pairs above the best random pair (%.3f)", above, len(sim), maxRandom)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestVectorOrderIndependent: the same terms give the same vector, bit for bit, in any order;
// the vector has norm 1.
func TestVectorOrderIndependent(t *testing.T) {
	m := semantic.Default()
	terms := search.Terms("Legal translator: French to English contracts, NDAs and leases; reentrancy-free l10n pipelines")
	want := m.Vector(terms)
	if d := math.Abs(norm(want) - 1); d > 1e-6 {
		t.Fatalf("norm %v", norm(want))
	}
	r := rand.New(rand.NewPCG(7, 7))
	for range 20 {
		p := slices.Clone(terms)
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		got := m.Vector(p)
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("order %q: component %d is %v, want %v", p, j, got[j], want[j])
			}
		}
	}
}

func norm(v semantic.Vector) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestVectorWeighted(t *testing.T) {
	m := semantic.Default()
	twice := m.Vector([]string{"translat", "audit", "translat"})
	once := m.Vector([]string{"audit", "translat"})
	for j := range once {
		if math.Float32bits(twice[j]) != math.Float32bits(once[j]) {
			t.Fatalf("a term twice: component %d %v, once %v", j, twice[j], once[j])
		}
	}
	weighted := m.VectorWeighted([]string{"translat", "audit"}, func(t string) float32 {
		if t == "translat" {
			return 2
		}
		return 1
	})
	if c := semantic.Cosine(once, weighted); c > 0.999 || c < 0.8 {
		t.Errorf("a term weighing 2 against 1: cosine %v with both weighing 1", c)
	}
	tr := m.Vector([]string{"translat"})
	if semantic.Cosine(weighted, tr) <= semantic.Cosine(once, tr) {
		t.Error("weighing translat 2 did not bring the vector nearer translat's")
	}
	if v := m.VectorWeighted([]string{"audit"}, func(string) float32 { return 0 }); v != nil {
		t.Errorf("every term weighing 0: %v, want nil", v)
	}
	if v := m.Vector(nil); v != nil {
		t.Errorf("no terms: %v, want nil", v)
	}
	if c := semantic.Cosine(nil, twice); c != 0 {
		t.Errorf("cosine with nil: %v", c)
	}
}

// TestSubword: a stem neither WordNet nor the glossary has gets its subword vector, the same each time, nearer a
// stem that shares most of its letters than one that shares none.
func TestSubword(t *testing.T) {
	m := semantic.Default()
	for _, s := range []string{"zkrollup", "k8s", "pulumi", "langchain"} {
		if m.Has(s) {
			t.Fatalf("%q has a trained vector", s)
		}
		if c := semantic.Cosine(m.Vector([]string{s}), semantic.Subword(s)); c < 0.9999 {
			t.Errorf("%q: cosine with its subword vector %v", s, c)
		}
		if c := semantic.Cosine(m.Vector([]string{s}), m.Vector([]string{s})); c < 0.9999 {
			t.Errorf("%q: cosine with itself %v", s, c)
		}
	}
	near := semantic.Cosine(semantic.Subword("terraform"), semantic.Subword("terraformer"))
	far := semantic.Cosine(semantic.Subword("terraform"), semantic.Subword("zkrollup"))
	if near < 0.4 || far > 0.3 {
		t.Errorf("terraform~terraformer %.3f, terraform~zkrollup %.3f", near, far)
	}
}

func TestWriteLoad(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var entries []semantic.Entry
	for _, s := range []string{"a", "ab", "abc", "b", "zz"} {
		v := make([]float64, semantic.Dim)
		for j := range v {
			v[j] = r.NormFloat64()
		}
		entries = append(entries, semantic.Entry{Stem: s, Vec: v})
	}
	var buf bytes.Buffer
	if err := semantic.Write(&buf, entries); err != nil {
		t.Fatal(err)
	}
	m, err := semantic.Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Stems(), []string{"a", "ab", "abc", "b", "zz"}) {
		t.Fatalf("stems %q", m.Stems())
	}
	for _, e := range entries {
		want := make(semantic.Vector, semantic.Dim)
		var ss float64
		for _, x := range e.Vec {
			ss += x * x
		}
		for j, x := range e.Vec {
			want[j] = float32(x / math.Sqrt(ss))
		}
		// 4 bits a component: a cosine of about 0.99 with the vector written.
		if c := semantic.Cosine(m.Vector([]string{e.Stem}), want); c < 0.98 {
			t.Errorf("%q: cosine %v with what was written", e.Stem, c)
		}
	}
	if err := semantic.Write(&buf, []semantic.Entry{entries[1], entries[0]}); err == nil {
		t.Error("unsorted entries written")
	}
}

func TestLoadRejects(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	raw := gunzip(t, semantic.Embedded())
	tests := []struct {
		name string
		file []byte
	}{
		{"empty", nil},
		{"not gzip", []byte("SURSEM1\n")},
		{"wrong magic", gz(append([]byte("SURSEM2\n"), raw[8:]...))},
		{"wrong dim", gz(append(append([]byte{}, raw[:8]...), append([]byte{64, 0}, raw[10:]...)...))},
		{"truncated", gz(raw[:len(raw)-10])},
		{"trailing bytes", gz(append(append([]byte{}, raw...), 0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := semantic.Load(bytes.NewReader(tt.file)); !errors.Is(err, semantic.ErrFormat) {
				t.Errorf("err = %v, want ErrFormat", err)
			}
		})
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// FuzzVector: any text's terms give a vector of norm 1 (or nil when it has no terms), the same
// for the terms in reverse.
func FuzzVector(f *testing.F) {
	for _, s := range []string{"", "translate", "Solidity reentrancy audit", "Übersetzerin für Verträge", "l10n i18n a11y", strings.Repeat("x", 200)} {
		f.Add(s)
	}
	m := semantic.Default()
	f.Fuzz(func(t *testing.T, text string) {
		terms := search.Terms(text)
		v := m.Vector(terms)
		if len(terms) == 0 {
			if v != nil {
				t.Fatalf("no terms, vector %v", v)
			}
			return
		}
		if d := math.Abs(norm(v) - 1); d > 1e-5 {
			t.Fatalf("norm %v", norm(v))
		}
		slices.Reverse(terms)
		w := m.Vector(terms)
		for j := range v {
			if math.Float32bits(v[j]) != math.Float32bits(w[j]) {
				t.Fatalf("reversed terms: component %d %v, want %v", j, w[j], v[j])
			}
		}
	})
}

// TestSentencesFindTheirCard: among ten cards written for this test, with near misses (a
// Solidity development shop beside a Solidity auditor, robot localisation beside software
// localisation), a query's vector is nearest the card a person would pick, for keywords and
// for sentences, the three among them. Not the judged relevance set: that one is
// measured by its own benchmark.
func TestSentencesFindTheirCard(t *testing.T) {
	m := semantic.Default()
	cards := []string{
		"Lexa Legal Translations. Certified French to English translation of contracts, NDAs and court documents. translation/fr-en legal",
		"Solidity security auditor. Smart contract audits, reentrancy and access control reviews, formal verification. security/audit smart-contracts",
		"Solidity dev shop. We build DeFi protocols and smart contracts in Solidity and Vyper. development/solidity",
		"Steuer agent. German VAT returns and bookkeeping for freelancers and small companies. tax/de accounting",
		"RoboNav. Localisation and mapping for warehouse robots, lidar SLAM. robotics/navigation",
		"Locale. Software localisation: we translate apps and websites into 30 languages. translation/software",
		"Paralegal bot. Drafts and reviews employment contracts under French law. legal/contracts",
		"Pixel studio. Logo design, branding and illustrations. design/logo",
		"MedTriage. Symptom checker and triage for patients. health/triage",
		"TravelPro. Books flights, hotels and plans itineraries. travel/booking",
	}
	x := semantic.NewIndex()
	for i, c := range cards {
		x.Put(int64(i), m.Vector(search.Terms(c)))
	}
	tests := []struct {
		query string
		want  []int64 // any of these first
	}{
		{"someone who can turn French contracts into English", []int64{0}},
		{"I need my Solidity vault checked for reentrancy before launch", []int64{1}},
		{"who can do my German VAT return", []int64{3}},
		{"solidity audit", []int64{1}},
		{"pentester for my smart contract", []int64{1}},
		{"localisation", []int64{5}},
		{"translator", []int64{0, 5}},
		{"make me a logo", []int64{7}},
		{"plan my holiday", []int64{9}},
		{"book a trip to Rome", []int64{9}},
		{"someone to check my symptoms", []int64{8}},
		{"employment contract lawyer", []int64{6}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits := x.Search(m.Vector(search.Terms(tt.query)), 2)
			if !slices.Contains(tt.want, hits[0].ID) {
				t.Errorf("first %q (%.3f), then %q (%.3f); want %q", cards[hits[0].ID], hits[0].Score, cards[hits[1].ID], hits[1].Score, cards[tt.want[0]])
			}
		})
	}
}
