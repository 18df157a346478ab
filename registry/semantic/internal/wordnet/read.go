package wordnet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Key names a synset: its part of speech ('n', 'v', 'a', 'r'; satellite adjectives are 'a',
// the file they live in) and its byte offset in that data file.
type Key struct {
	POS    byte
	Offset int
}

// Synset is one line of a data file.
type Synset struct {
	Key Key
	// Lemmas are the synset's words as the file spells them (case kept, '_' between the
	// words of a collocation), adjective markers such as "(a)" taken off.
	Lemmas []string
	Ptrs   []Ptr
	// Gloss is the definition, the examples after it (quoted) left out.
	Gloss string
}

// Ptr is one pointer of a synset: its symbol ("@" hypernym, "&" similar to, "+" derivation,
// ...) and the synset it points to.
type Ptr struct {
	Sym    string
	Target Key
}

// Lemma is one line of an index file: a lemma (lower case, '_' between words) of one part of
// speech, its synsets in WordNet's order (most frequent sense first) and how many of them
// were seen in the tagged corpus (tagsense_cnt).
type Lemma struct {
	Word    string
	POS     byte
	Synsets []Key
	Tagged  int
	// Counts are how often the tagged corpus saw each sense (cntlist.rev), in the order of
	// Synsets; 0 for a sense it never saw.
	Counts []int
}

// DB is the part of WordNet 3.0 the training reads.
type DB struct {
	Synsets map[Key]*Synset
	// Keys are the synsets' keys in a fixed order (part of speech, then offset).
	Keys []Key
	// Lemmas are the index entries, in the order of the files (n, v, a, r; sorted by lemma).
	Lemmas []Lemma
}

var posFiles = []struct {
	pos  byte
	name string
}{{'n', "noun"}, {'v', "verb"}, {'a', "adj"}, {'r', "adv"}}

// Read parses data.{noun,verb,adj,adv}, index.{noun,verb,adj,adv} and cntlist.rev in dir (Debian's
// wordnet-base installs them in /usr/share/wordnet).
func Read(dir string) (*DB, error) {
	db := &DB{Synsets: map[Key]*Synset{}}
	for _, pf := range posFiles {
		if err := eachLine(filepath.Join(dir, "data."+pf.name), func(line string) error {
			s, err := parseData(line)
			if err != nil {
				return err
			}
			if s.Key.POS != pf.pos {
				return fmt.Errorf("synset %d of data.%s has part of speech %c", s.Key.Offset, pf.name, s.Key.POS)
			}
			db.Synsets[s.Key] = s
			db.Keys = append(db.Keys, s.Key)
			return nil
		}); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, "index."+pf.name), func(line string) error {
			l, err := parseIndex(line)
			if err != nil {
				return err
			}
			db.Lemmas = append(db.Lemmas, l)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	sort.Slice(db.Keys, func(i, j int) bool {
		a, b := db.Keys[i], db.Keys[j]
		if a.POS != b.POS {
			return a.POS < b.POS
		}
		return a.Offset < b.Offset
	})
	counts := map[senseNum]int{}
	if err := eachLine(filepath.Join(dir, "cntlist.rev"), func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 {
			return fmt.Errorf("want 3 fields")
		}
		lemma, key, ok := strings.Cut(f[0], "%")
		if !ok || key == "" {
			return fmt.Errorf("bad sense key %q", f[0])
		}
		pos, ok := map[byte]byte{'1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a'}[key[0]]
		if !ok {
			return fmt.Errorf("bad sense key %q", f[0])
		}
		num, err := strconv.Atoi(f[1])
		if err != nil {
			return err
		}
		c, err := strconv.Atoi(f[2])
		if err != nil {
			return err
		}
		counts[senseNum{strings.ToLower(lemma), pos, num}] += c
		return nil
	}); err != nil {
		return nil, err
	}
	for i := range db.Lemmas {
		l := &db.Lemmas[i]
		l.Counts = make([]int, len(l.Synsets))
		for j := range l.Synsets {
			l.Counts[j] = counts[senseNum{l.Word, l.POS, j + 1}]
		}
	}
	for _, l := range db.Lemmas {
		for _, k := range l.Synsets {
			if db.Synsets[k] == nil {
				return nil, fmt.Errorf("index entry %q names synset %c %d, which no data file has", l.Word, k.POS, k.Offset)
			}
		}
	}
	return db, nil
}

// senseNum names the n-th sense (from 1) of a lemma in one part of speech.
type senseNum struct {
	lemma string
	pos   byte
	n     int
}

// eachLine calls f on every line of the file but the license header (lines that start with
// two spaces).
func eachLine(path string, f func(string) error) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || strings.TrimSpace(line) == "" {
			continue
		}
		if err := f(line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

func posOf(s string) (byte, error) {
	switch s {
	case "n", "v", "a", "r":
		return s[0], nil
	case "s":
		return 'a', nil
	}
	return 0, fmt.Errorf("unknown part of speech %q", s)
}

// parseData reads "offset lex_filenum ss_type w_cnt word lex_id ... p_cnt ptr... [frames] | gloss".
func parseData(line string) (*Synset, error) {
	head, gloss, _ := strings.Cut(line, " | ")
	f := strings.Fields(head)
	if len(f) < 4 {
		return nil, fmt.Errorf("short synset line")
	}
	off, err := strconv.Atoi(f[0])
	if err != nil {
		return nil, err
	}
	pos, err := posOf(f[2])
	if err != nil {
		return nil, err
	}
	s := &Synset{Key: Key{pos, off}}
	wc, err := strconv.ParseUint(f[3], 16, 16)
	if err != nil {
		return nil, err
	}
	i := 4
	for range wc {
		if i+1 >= len(f) {
			return nil, fmt.Errorf("synset %d: words cut short", off)
		}
		w := f[i]
		if p := strings.IndexByte(w, '('); p > 0 && strings.HasSuffix(w, ")") {
			w = w[:p] // adjective position markers: (a), (p), (ip)
		}
		s.Lemmas = append(s.Lemmas, w)
		i += 2
	}
	if i >= len(f) {
		return nil, fmt.Errorf("synset %d: no pointer count", off)
	}
	pc, err := strconv.Atoi(f[i])
	if err != nil {
		return nil, err
	}
	i++
	for range pc {
		if i+3 >= len(f) {
			return nil, fmt.Errorf("synset %d: pointers cut short", off)
		}
		to, err := strconv.Atoi(f[i+1])
		if err != nil {
			return nil, err
		}
		tp, err := posOf(f[i+2])
		if err != nil {
			return nil, err
		}
		s.Ptrs = append(s.Ptrs, Ptr{Sym: f[i], Target: Key{tp, to}})
		i += 4
	}
	if q := strings.IndexByte(gloss, '"'); q >= 0 {
		gloss = gloss[:q]
	}
	s.Gloss = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(gloss), ";"))
	return s, nil
}

// parseIndex reads "lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offset...".
func parseIndex(line string) (Lemma, error) {
	f := strings.Fields(line)
	if len(f) < 6 {
		return Lemma{}, fmt.Errorf("short index line")
	}
	pos, err := posOf(f[1])
	if err != nil {
		return Lemma{}, err
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return Lemma{}, err
	}
	pc, err := strconv.Atoi(f[3])
	if err != nil {
		return Lemma{}, err
	}
	i := 4 + pc + 1 // the pointer symbols, then sense_cnt (the same as synset_cnt)
	if i+1+n != len(f) {
		return Lemma{}, fmt.Errorf("index entry %q: %d fields for %d synsets", f[0], len(f), n)
	}
	tagged, err := strconv.Atoi(f[i])
	if err != nil {
		return Lemma{}, err
	}
	l := Lemma{Word: f[0], POS: pos, Tagged: tagged}
	for _, o := range f[i+1:] {
		off, err := strconv.Atoi(o)
		if err != nil {
			return Lemma{}, err
		}
		l.Synsets = append(l.Synsets, Key{pos, off})
	}
	return l, nil
}
