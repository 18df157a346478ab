package wordnet

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseData(t *testing.T) {
	tests := []struct {
		name, line string
		want       *Synset
	}{
		{"noun", `00002137 03 n 02 abstraction 0 abstract_entity 0 002 @ 00001740 n 0000 + 00692347 v 0101 | a general concept formed by extracting common features from specific examples  `,
			&Synset{Key: Key{'n', 2137}, Lemmas: []string{"abstraction", "abstract_entity"},
				Ptrs: []Ptr{{"@", Key{'n', 1740}}, {"+", Key{'v', 692347}}}, Gloss: "a general concept formed by extracting common features from specific examples"}},
		{"verb with frames and examples", `00022316 29 v 02 sedate 0 calm 0 002 @ 00019448 v 0000 ! 00022686 v 0101 01 + 09 00 | cause to be calm or quiet as by administering a sedative to; "The patient must be sedated before the operation"  `,
			&Synset{Key: Key{'v', 22316}, Lemmas: []string{"sedate", "calm"},
				Ptrs: []Ptr{{"@", Key{'v', 19448}}, {"!", Key{'v', 22686}}}, Gloss: "cause to be calm or quiet as by administering a sedative to"}},
		{"satellite adjective with a marker", `00004296 00 s 01 galore(ip) 0 001 & 00013887 a 0000 | in great numbers`,
			&Synset{Key: Key{'a', 4296}, Lemmas: []string{"galore"}, Ptrs: []Ptr{{"&", Key{'a', 13887}}}, Gloss: "in great numbers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseData(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseData (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"", "00001 03 n", "00001 03 x 01 a 0 000 | x", "00001 03 n 02 a 0 000 | x", "00001 03 n 01 a 0 002 @ 1 n 0000 | x"} {
		if _, err := parseData(bad); err == nil {
			t.Errorf("parseData(%q) took it", bad)
		}
	}
}

func TestParseIndex(t *testing.T) {
	got, err := parseIndex("audit n 2 4 @ ~ %p + 2 1 13411157 00141176  ")
	if err != nil {
		t.Fatal(err)
	}
	want := Lemma{Word: "audit", POS: 'n', Tagged: 1, Synsets: []Key{{'n', 13411157}, {'n', 141176}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseIndex (-want +got):\n%s", diff)
	}
	if _, err := parseIndex("audit n 3 4 @ ~ %p + 2 1 13411157 00141176"); err == nil {
		t.Error("a synset count that does not match was taken")
	}
}
