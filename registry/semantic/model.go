package semantic

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
)

// Vector is a unit vector of Dim components (the meaning of a card or a query), or nil when
// none of its terms had one.
type Vector []float32

// Model maps stems (search.Terms' output) to word vectors: WordNet's words from the
// embedded model, any other stem to its subword vector (Subword).
type Model struct {
	index  map[string]int32
	stems  []string  // sorted
	vecs   []int8    // len(stems)·Dim quantized components, -7..7
	scales []float32 // per stem: vecs·scale has norm 1
}

//go:embed wordnet.model.gz
var embedded []byte

var (
	defaultOnce  sync.Once
	defaultModel *Model
)

// Default is the model committed in the repository (trained from WordNet 3.0 by
// internal/train, `make semantic-model`), loaded once. It panics if the embedded file does not
// load: the tests load it, so a build that passes them cannot.
func Default() *Model {
	defaultOnce.Do(func() {
		m, err := Load(bytes.NewReader(embedded))
		if err != nil {
			panic(fmt.Sprintf("semantic: embedded model: %v", err))
		}
		defaultModel = m
	})
	return defaultModel
}

// Embedded returns the committed model file's bytes (gzip), for the drift check.
func Embedded() []byte { return slices.Clone(embedded) }

// Len is the number of stems the model has a trained vector for.
func (m *Model) Len() int { return len(m.stems) }

// Has reports whether stem has a trained vector (else Vector uses its subword vector).
func (m *Model) Has(stem string) bool {
	_, ok := m.index[stem]
	return ok
}

// Stems returns the stems with a trained vector, sorted.
func (m *Model) Stems() []string { return slices.Clone(m.stems) }

// Vector is VectorWeighted with every term weighing 1: the normalized sum of the vectors of
// the distinct terms.
func (m *Model) Vector(terms []string) Vector {
	return m.VectorWeighted(terms, nil)
}

// VectorWeighted is the normalized sum of the word vectors of the distinct terms, each
// scaled by weight(term) (1 when weight is nil; a term weighing 0 or less is skipped). A term
// given twice counts once: a card that repeats a word is not more about it (on a set of
// cards written for the purpose, counting repeats put a Solidity development shop that names
// Solidity twice above the Solidity auditor for "solidity audit"); a caller that wants
// repeats to count says so in weight. The terms are summed in sorted order in float64, each
// product exact, so the same set of terms gives the same vector bit for bit on every
// machine, whatever the order they come in. It returns nil when no term counts.
func (m *Model) VectorWeighted(terms []string, weight func(term string) float32) Vector {
	if len(terms) == 0 {
		return nil
	}
	sorted := slices.Clone(terms)
	slices.Sort(sorted)
	var acc [Dim]float64
	n := 0
	var sub [Dim]int32
	for i, t := range sorted {
		if i > 0 && t == sorted[i-1] {
			continue
		}
		w := float32(1)
		if weight != nil {
			w = weight(t)
		}
		if !(w > 0) || math.IsInf(float64(w), 0) {
			continue
		}
		n++
		if i, ok := m.index[t]; ok {
			// float32·float32 is exact in float64 (48 bits), and so is its product with a
			// component of at most 3 bits: the sum is the only rounding, in a fixed order.
			ws := float64(w) * float64(m.scales[i])
			row := m.vecs[int(i)*Dim : int(i)*Dim+Dim]
			for j, q := range row {
				acc[j] += float64(ws * float64(q))
			}
			continue
		}
		norm := subwordCounts(t, &sub)
		ws := float64(w) / norm
		for j, c := range sub {
			acc[j] += float64(ws * float64(c))
		}
	}
	if n == 0 {
		return nil
	}
	return normalize(acc[:])
}

// Subword is the vector of a stem from its letters alone: hashed character trigrams of
// "<stem>" and the whole stem (twice the weight of a trigram), each a pseudo-random ±1 vector.
// A stem outside WordNet ("reentranc", "solid", "l10n") gets the same vector on every card
// and query, near the vectors of stems that share most of its trigrams. Trained vectors
// include it with the weight SubwordWeight.
func Subword(stem string) Vector {
	var c [Dim]int32
	norm := subwordCounts(stem, &c)
	v := make(Vector, Dim)
	for j, x := range c {
		v[j] = float32(float64(x) / norm)
	}
	return v
}

// subwordCounts sets c to the sum of the ±1 vectors of stem's trigrams and twice its own,
// and returns its norm.
func subwordCounts(stem string, c *[Dim]int32) float64 {
	*c = [Dim]int32{}
	add := func(kind byte, s string, w int32) {
		bits := Signs(kind, s)
		for j := range Dim {
			if bits[j/64]>>(j%64)&1 == 1 {
				c[j] += w
			} else {
				c[j] -= w
			}
		}
	}
	add('w', stem, 2)
	g := "<" + stem + ">"
	for i := 0; i+3 <= len(g); i++ {
		add('g', g[i:i+3], 1)
	}
	var ss int64
	for _, x := range c {
		ss += int64(x) * int64(x)
	}
	return math.Sqrt(float64(ss))
}

// Signs is the pseudo-random ±1 vector of a feature (bit j of word j/64 set: +1), from
// SplitMix64 seeded with the FNV-1a hash of kind and name. Training and Subword share it.
func Signs(kind byte, name string) [Dim / 64]uint64 {
	h := uint64(14695981039346656037)
	h ^= uint64(kind)
	h *= 1099511628211
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	var out [Dim / 64]uint64
	for i := range out {
		h += 0x9e3779b97f4a7c15
		z := h
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		out[i] = z ^ (z >> 31)
	}
	return out
}

// normalize returns acc scaled to norm 1 as float32s, or nil for a zero vector.
func normalize(acc []float64) Vector {
	var ss float64
	for _, x := range acc {
		ss += float64(x * x) // the conversion forbids a fused multiply-add: same bits everywhere
	}
	if ss == 0 {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	v := make(Vector, len(acc))
	for j, x := range acc {
		v[j] = float32(x * inv)
	}
	return v
}

// Cosine is the cosine of two vectors (their dot product: both have norm 1), 0 when either is
// nil. The products are exact in float64 and summed in order, so it is the same everywhere.
func Cosine(a, b Vector) float32 {
	if len(a) != Dim || len(b) != Dim {
		return 0
	}
	var s float64
	for j := range Dim {
		s += float64(float64(a[j]) * float64(b[j]))
	}
	return float32(s)
}

// The model file: gzip of
//
//	magic "SURSEM1\n", dim uint16 LE, count uint32 LE,
//	count entries sorted by stem: shared uint8 (bytes in common with the previous stem),
//	suffix length uint8, suffix, scale float32 LE, dim/2 bytes (two 4-bit two's-complement
//	components each, the even one in the low nibble).
const magic = "SURSEM1\n"

// Entry is one stem's trained vector, as Write takes it.
type Entry struct {
	Stem string
	Vec  []float64
}

// ErrFormat is returned by Load for a file that is not a model of this version and Dim.
var ErrFormat = errors.New("semantic: not a model file")

// Write writes entries (sorted by stem, each stem once, Dim components each) as a model file:
// each vector quantized to 4 bits per component (step max|x|/7) with the scale that gives the
// quantized vector norm 1. The output depends on nothing but the entries.
func Write(w io.Writer, entries []Entry) error {
	if !sort.SliceIsSorted(entries, func(i, j int) bool { return entries[i].Stem < entries[j].Stem }) {
		return errors.New("semantic: entries not sorted")
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	bw.WriteString(magic)
	binary.Write(bw, binary.LittleEndian, uint16(Dim))
	binary.Write(bw, binary.LittleEndian, uint32(len(entries)))
	prev := ""
	for i, e := range entries {
		if len(e.Vec) != Dim || e.Stem == "" || len(e.Stem) > 255 || (i > 0 && e.Stem == prev) {
			return fmt.Errorf("semantic: bad entry %q", e.Stem)
		}
		shared := 0
		for shared < len(prev) && shared < len(e.Stem) && shared < 255 && prev[shared] == e.Stem[shared] {
			shared++
		}
		bw.WriteByte(byte(shared))
		bw.WriteByte(byte(len(e.Stem) - shared))
		bw.WriteString(e.Stem[shared:])
		q, scale := quantize4(e.Vec)
		binary.Write(bw, binary.LittleEndian, math.Float32bits(scale))
		for j := 0; j < Dim; j += 2 {
			bw.WriteByte(byte(q[j])&0x0f | byte(q[j+1])<<4)
		}
		prev = e.Stem
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

func quantize4(v []float64) ([Dim]int8, float32) {
	var q [Dim]int8
	var mx float64
	for _, x := range v {
		mx = max(mx, math.Abs(x))
	}
	if mx == 0 {
		return q, 0
	}
	var ss int64
	for j, x := range v {
		r := math.Round(x / mx * 7)
		q[j] = int8(r)
		ss += int64(r * r)
	}
	return q, float32(1 / math.Sqrt(float64(ss)))
}

// Load reads a model file (Write's format).
func Load(r io.Reader) (*Model, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	br := bufio.NewReader(zr)
	head := make([]byte, len(magic)+6)
	if _, err := io.ReadFull(br, head); err != nil || string(head[:len(magic)]) != magic {
		return nil, ErrFormat
	}
	if d := binary.LittleEndian.Uint16(head[len(magic):]); d != Dim {
		return nil, fmt.Errorf("%w: %d dimensions, want %d", ErrFormat, d, Dim)
	}
	n := int(binary.LittleEndian.Uint32(head[len(magic)+2:]))
	if n > maxStems {
		return nil, fmt.Errorf("%w: %d stems", ErrFormat, n)
	}
	m := &Model{index: make(map[string]int32, n), stems: make([]string, 0, n), vecs: make([]int8, 0, n*Dim), scales: make([]float32, 0, n)}
	prev := ""
	buf := make([]byte, 4+Dim/2)
	for i := range n {
		var hl [2]byte
		if _, err := io.ReadFull(br, hl[:]); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrFormat, i, err)
		}
		if int(hl[0]) > len(prev) || hl[1] == 0 {
			return nil, fmt.Errorf("%w: entry %d: bad stem", ErrFormat, i)
		}
		suf := make([]byte, hl[1])
		if _, err := io.ReadFull(br, suf); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrFormat, i, err)
		}
		stem := prev[:hl[0]] + string(suf)
		if stem <= prev {
			return nil, fmt.Errorf("%w: entry %d: stems out of order", ErrFormat, i)
		}
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("%w: entry %d: %v", ErrFormat, i, err)
		}
		m.index[stem] = int32(i)
		m.stems = append(m.stems, stem)
		m.scales = append(m.scales, math.Float32frombits(binary.LittleEndian.Uint32(buf)))
		for _, b := range buf[4:] {
			m.vecs = append(m.vecs, int8(b<<4)>>4, int8(b)>>4)
		}
		prev = stem
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: bytes after the last entry", ErrFormat)
	}
	return m, nil
}
