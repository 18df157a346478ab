package wordnet

import (
	_ "embed"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/surety-ioa/surety/registry/search"
	"github.com/surety-ioa/surety/registry/semantic"
)

// Weights of a synset's features (see Train). They were set by hand on pairs of words, once.
const (
	weightSynonym      = 1.0 // a word of the synset (a collocation's words share it)
	weightSelf         = 1.0 // the synset itself
	weightGloss        = 0.7 // the norm of the definition's idf-weighted stems
	weightHypernym     = 0.6 // a hypernym synset
	weightHypernymWord = 0.4 // a word of a hypernym
	weightHypernym2    = 0.3 // a hypernym's hypernym
	weightRelated      = 0.5 // a synset related by similarity, derivation, also-see, attribute, pertainym, verb group
	weightRelatedWord  = 0.3 // a word of such a synset
	weightDomain       = 0.3 // the topic, region or usage domain of the synset
	// weightCollocation scales what a synset gives each word of a collocation among its
	// lemmas ("value-added tax" gives to "valu", "ad" and "tax"), against 1 for a single
	// word's own synsets.
	weightCollocation = 0.25
	// weightSmooth is the weight of what a word's senses' neighbours add (the smoothing
	// step), its own vector weighing 1.
	weightSmooth = 1.0
	// weightGlossary is the norm of a glossary entry's definition (weightGloss for WordNet's
	// own): the definition is all the entry has.
	weightGlossary = 2.0
	// glossaryCount is what a glossary entry's sense counts for, as if the tagged corpus had
	// seen it that often: these are the senses cards mean.
	glossaryCount = 5
)

// glossary holds the words agents use that WordNet lacks, each with a definition in
// WordNet's words (see the file's header).
//
//go:embed glossary.txt
var glossary string

// glossaryPOS is the part of speech of the glossary's synsets.
const glossaryPOS = 'g'

// addGlossary adds the glossary's entries to db as synsets of part of speech glossaryPOS,
// numbered in the file's order, and as index entries.
func addGlossary(db *DB) error {
	n := 0
	for i, line := range strings.Split(glossary, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		term, def, ok := strings.Cut(line, "|")
		term, def = strings.TrimSpace(term), strings.TrimSpace(def)
		if !ok || term == "" || def == "" {
			return fmt.Errorf("glossary.txt:%d: want \"term | definition\"", i+1)
		}
		n++
		k := Key{glossaryPOS, n}
		word := strings.ReplaceAll(strings.ToLower(term), " ", "_")
		db.Synsets[k] = &Synset{Key: k, Lemmas: []string{word}, Gloss: def}
		db.Keys = append(db.Keys, k)
		db.Lemmas = append(db.Lemmas, Lemma{Word: word, POS: glossaryPOS, Synsets: []Key{k}, Counts: []int{glossaryCount}})
	}
	return nil
}

// Budget bounds the stems kept in the model, the most used first (about 70 bytes each).
const Budget = 44000

// Stats describes a training run.
type Stats struct {
	Synsets, Lemmas, Candidates, Stems, Features int
}

// Train learns a vector for each of the most used stems of WordNet's words in dir, and of
// the glossary's terms:
//
//  1. each synset is a sparse vector of features: itself, its words' stems, the stems of its
//     definition weighted by idf (log of synsets over synsets whose definition has the stem),
//     its hypernyms and their hypernyms, the synsets it is related to (similar to,
//     derivationally related, also see, attribute, pertainym, verb group) and its domains,
//     with the weights above, normalized;
//  2. each feature is a pseudo-random ±1 vector of semantic.Dim components
//     (semantic.Signs), so a synset's dense vector is the weighted sum of its features'
//     (random indexing: cosines between sparse vectors are kept, up to noise of about
//     1/√Dim);
//  3. a stem's vector sums the dense vectors of the synsets of every lemma that stems to it,
//     each sense weighing its count in the tagged corpus (cntlist.rev) plus 1/rank, a
//     collocation's synsets weighing weightCollocation/n on each of its n words; the sums
//     are normalized and their mean subtracted (it is what every word shares);
//  4. one step of smoothing: each stem adds, with weight weightSmooth, the sum over its
//     senses of the vectors of step 3 of the sense's synonyms, definition words and
//     hypernyms' words, so that words two links apart come nearer;
//  5. normalized, plus semantic.Subword's vector with weight semantic.SubwordWeight,
//     normalized again.
//
// Stems are kept by how often the tagged corpus saw their lemmas, then by how many
// definitions and collocations use them, then by their number of senses, then shortest
// first, up to Budget, the glossary's first;
// proper nouns (lemmas whose every synset is an instance: cities, people) are left out.
// Everything runs in a fixed order, so the result depends only on the files.
func Train(dir string) ([]semantic.Entry, Stats, error) {
	db, err := Read(dir)
	if err != nil {
		return nil, Stats{}, err
	}
	if err := addGlossary(db); err != nil {
		return nil, Stats{}, err
	}
	st := Stats{Synsets: len(db.Keys), Lemmas: len(db.Lemmas)}

	stemCache := map[string][]string{}
	stemsOf := func(lemma string) []string {
		if s, ok := stemCache[lemma]; ok {
			return s
		}
		s := search.Terms(strings.NewReplacer("_", " ", "-", " ").Replace(lemma))
		stemCache[lemma] = s
		return s
	}

	// Definitions: their stems and the idf of each.
	gloss := map[Key][]string{}
	df := map[string]int{}
	for _, k := range db.Keys {
		terms := uniq(search.Terms(db.Synsets[k].Gloss))
		gloss[k] = terms
		for _, t := range terms {
			df[t]++
		}
	}
	// Rounded to 1/1024: math.Log may differ in the last bit from one architecture to
	// another, rounding makes that as good as never show.
	idf := func(t string) float64 { return math.Round(math.Log(float64(len(db.Keys))/float64(df[t]))*1024) / 1024 }

	// Features, interned in the order they are first met.
	var feats []string
	featID := map[string]int32{}
	intern := func(name string) int32 {
		if id, ok := featID[name]; ok {
			return id
		}
		id := int32(len(feats))
		featID[name] = id
		feats = append(feats, name)
		return id
	}
	synFeat := func(k Key) int32 { return intern(fmt.Sprintf("s%c%08d", k.POS, k.Offset)) }
	wordFeat := func(stem string) int32 { return intern("w" + stem) }

	sparse := func(k Key) []fw {
		s := db.Synsets[k]
		f := map[int32]float64{}
		f[synFeat(k)] += weightSelf
		words := func(s *Synset, w float64) {
			for _, l := range s.Lemmas {
				stems := stemsOf(l)
				for _, t := range stems {
					f[wordFeat(t)] += w / float64(len(stems))
				}
			}
		}
		words(s, weightSynonym)
		if g := gloss[k]; len(g) > 0 {
			var ss float64
			for _, t := range g {
				ss += float64(idf(t) * idf(t))
			}
			if ss > 0 {
				norm := glossWeight(k) / math.Sqrt(ss)
				for _, t := range g {
					f[wordFeat(t)] += float64(idf(t) * norm)
				}
			}
		}
		for _, p := range s.Ptrs {
			t := db.Synsets[p.Target]
			if t == nil {
				continue
			}
			switch p.Sym {
			case "@", "@i":
				f[synFeat(p.Target)] += weightHypernym
				words(t, weightHypernymWord)
				for _, p2 := range t.Ptrs {
					if p2.Sym == "@" || p2.Sym == "@i" {
						f[synFeat(p2.Target)] += weightHypernym2
					}
				}
			case "&", "+", "^", "=", "\\", "$":
				f[synFeat(p.Target)] += weightRelated
				words(t, weightRelatedWord)
			case ";c", ";r", ";u":
				f[synFeat(p.Target)] += weightDomain
			}
		}
		out := make([]fw, 0, len(f))
		for id, w := range f {
			out = append(out, fw{id, w})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
		var ss float64
		for _, x := range out {
			ss += float64(x.w * x.w)
		}
		inv := 1 / math.Sqrt(ss)
		for i := range out {
			out[i].w *= inv
		}
		return out
	}

	// Which stems to keep: proper nouns out, the most used first.
	// A lemma is a proper noun when every synset of it is an instance (of a city, a
	// person, ...): "paris" is, "english" (a language, a people) is not.
	instance := func(k Key) bool {
		for _, p := range db.Synsets[k].Ptrs {
			if p.Sym == "@i" {
				return true
			}
		}
		return false
	}
	proper := func(l Lemma) bool {
		for _, k := range l.Synsets {
			if !instance(k) {
				return false
			}
		}
		return true
	}
	type usage struct {
		glossary                      bool
		tagged, mentions, senses, len int
	}
	use := map[string]*usage{}
	for _, l := range db.Lemmas {
		if proper(l) {
			continue
		}
		stems := stemsOf(l.Word)
		for _, t := range stems {
			u := use[t]
			if u == nil {
				u = &usage{mentions: df[t], len: len(t)}
				use[t] = u
			}
			for _, c := range l.Counts {
				u.tagged += c
			}
			u.senses += len(l.Synsets)
			u.glossary = u.glossary || l.POS == glossaryPOS
			if len(stems) > 1 {
				u.mentions++ // a collocation that has the word: "tax" is in many
			}
		}
	}
	var cands []string
	for t := range use {
		cands = append(cands, t)
	}
	sort.Slice(cands, func(i, j int) bool {
		a, b := use[cands[i]], use[cands[j]]
		if a.glossary != b.glossary {
			return a.glossary
		}
		if a.tagged != b.tagged {
			return a.tagged > b.tagged
		}
		if a.mentions != b.mentions {
			return a.mentions > b.mentions
		}
		if a.senses != b.senses {
			return a.senses > b.senses
		}
		if a.len != b.len {
			return a.len < b.len // short words are the common ones
		}
		return cands[i] < cands[j]
	})
	st.Candidates = len(cands)
	if len(cands) > Budget {
		cands = cands[:Budget]
	}
	keep := map[string]bool{}
	for _, t := range cands {
		keep[t] = true
	}

	// Dense synset vectors, on demand; each feature's signs once.
	signs := map[int32][semantic.Dim / 64]uint64{}
	dense := map[Key]*[semantic.Dim]float64{}
	synVec := func(k Key) *[semantic.Dim]float64 {
		if v, ok := dense[k]; ok {
			return v
		}
		v := new([semantic.Dim]float64)
		for _, x := range sparse(k) {
			b, ok := signs[x.id]
			if !ok {
				name := feats[x.id]
				b = semantic.Signs(name[0], name[1:])
				signs[x.id] = b
			}
			for j := range semantic.Dim {
				if b[j/64]>>(j%64)&1 == 1 {
					v[j] += x.w
				} else {
					v[j] -= x.w
				}
			}
		}
		dense[k] = v
		return v
	}

	type sense struct {
		stem string
		key  Key
		w    float64
	}
	var senses []sense
	words := map[string]*[semantic.Dim]float64{}
	for _, l := range db.Lemmas {
		if proper(l) {
			continue
		}
		stems := stemsOf(l.Word)
		for rank, k := range l.Synsets {
			w := senseWeight(l.Counts[rank], rank)
			if len(stems) > 1 {
				w *= weightCollocation / float64(len(stems))
			}
			sv := synVec(k)
			for _, t := range stems {
				if !keep[t] {
					continue
				}
				senses = append(senses, sense{t, k, w})
				acc := words[t]
				if acc == nil {
					acc = new([semantic.Dim]float64)
					words[t] = acc
				}
				for j := range semantic.Dim {
					acc[j] += float64(w * sv[j])
				}
			}
		}
	}
	st.Features = len(feats)

	// Normalize, centre, normalize, add the subword vector.
	stems := make([]string, 0, len(words))
	for t := range words {
		stems = append(stems, t)
	}
	sort.Strings(stems)
	var mean [semantic.Dim]float64
	for _, t := range stems {
		unit(words[t][:])
		for j := range semantic.Dim {
			mean[j] += words[t][j]
		}
	}
	for j := range mean {
		mean[j] /= float64(len(stems))
	}
	first := make(map[string][]float64, len(stems))
	for _, t := range stems {
		v := make([]float64, semantic.Dim)
		for j := range v {
			v[j] = words[t][j] - mean[j]
		}
		unit(v)
		first[t] = v
	}

	// One step of smoothing over the graph: each sense adds the centred vectors of its
	// synset's words, its definition's words and its hypernyms' words, so that words two
	// links apart ("audit" → "examine" ← "check") come nearer.
	context := map[Key][]float64{}
	contextOf := func(k Key) []float64 {
		if c, ok := context[k]; ok {
			return c
		}
		c := make([]float64, semantic.Dim)
		add := func(t string, w float64) {
			if v := first[t]; v != nil {
				for j := range c {
					c[j] += float64(w * v[j])
				}
			}
		}
		members := func(s *Synset, w float64) {
			for _, l := range s.Lemmas {
				ts := stemsOf(l)
				for _, t := range ts {
					add(t, w/float64(len(ts)))
				}
			}
		}
		s := db.Synsets[k]
		members(s, weightSynonym)
		if g := gloss[k]; len(g) > 0 {
			var ss float64
			for _, t := range g {
				ss += float64(idf(t) * idf(t))
			}
			norm := glossWeight(k) / math.Sqrt(ss)
			for _, t := range g {
				add(t, idf(t)*norm)
			}
		}
		for _, p := range s.Ptrs {
			if p.Sym == "@" || p.Sym == "@i" {
				members(db.Synsets[p.Target], weightHypernymWord)
			}
		}
		unit(c)
		context[k] = c
		return c
	}
	near := make(map[string][]float64, len(stems))
	for _, s := range senses {
		n := near[s.stem]
		if n == nil {
			n = make([]float64, semantic.Dim)
			near[s.stem] = n
		}
		c := contextOf(s.key)
		for j := range n {
			n[j] += float64(s.w * c[j])
		}
	}

	entries := make([]semantic.Entry, 0, len(stems))
	for _, t := range stems {
		v := first[t]
		n := near[t]
		unit(n)
		for j := range v {
			v[j] += float64(weightSmooth * n[j])
		}
		unit(v)
		sub := semantic.Subword(t)
		for j := range v {
			v[j] += float64(semantic.SubwordWeight * float64(sub[j]))
		}
		unit(v)
		entries = append(entries, semantic.Entry{Stem: t, Vec: v})
	}
	st.Stems = len(entries)
	return entries, st, nil
}

func glossWeight(k Key) float64 {
	if k.POS == glossaryPOS {
		return weightGlossary
	}
	return weightGloss
}

// senseWeight is the weight of a lemma's sense (rank from 0, in WordNet's order) that the
// tagged corpus saw count times: the count, plus 1/(rank+1) so that unseen senses still
// count, the first most.
func senseWeight(count, rank int) float64 {
	return float64(count) + 1/float64(rank+1)
}

type fw struct {
	id int32
	w  float64
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func unit(v []float64) {
	var ss float64
	for _, x := range v {
		ss += float64(x * x)
	}
	if ss == 0 {
		return
	}
	inv := 1 / math.Sqrt(ss)
	for j := range v {
		v[j] *= inv
	}
}
