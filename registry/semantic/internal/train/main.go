// Command train is the semantic model's training recipe: it reads WordNet 3.0 from Debian's
// wordnet-base (-wordnet, /usr/share/wordnet by default) and writes the model file that
// registry/semantic embeds (-out). `make semantic-model` installs wordnet-base if missing and
// runs it; the output depends only on the WordNet files.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/surety-ioa/surety/registry/semantic"
	"github.com/surety-ioa/surety/registry/semantic/internal/wordnet"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "directory of WordNet 3.0's data.* and index.* files")
	out := flag.String("out", "registry/semantic/wordnet.model.gz", "model file to write")
	flag.Parse()
	entries, st, err := wordnet.Train(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	var buf bytes.Buffer
	if err := semantic.Write(&buf, entries); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	fmt.Printf("train: %d synsets, %d index entries, %d candidate stems, %d kept, %d features; %s: %d bytes\n",
		st.Synsets, st.Lemmas, st.Candidates, st.Stems, st.Features, *out, buf.Len())
}
