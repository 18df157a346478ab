package semantic_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/surety-ioa/surety/registry/semantic"
	"github.com/surety-ioa/surety/registry/semantic/internal/wordnet"
)

// wordnetDir is where Debian's wordnet-base installs WordNet 3.0.
const wordnetDir = "/usr/share/wordnet"

// TestModelIsTrained: the committed model is what the recipe (internal/train) makes of
// WordNet, byte for byte once decompressed. It needs Debian's wordnet-base: `make
// semantic-model` installs it and trains again.
func TestModelIsTrained(t *testing.T) {
	if _, err := os.Stat(wordnetDir + "/data.noun"); err != nil {
		t.Skipf("WordNet is not installed in %s (Debian's wordnet-base): the drift check of the committed model needs it; `make semantic-model` installs it", wordnetDir)
	}
	if testing.Short() {
		t.Skip("training takes seconds: not in -short")
	}
	entries, _, err := wordnet.Train(wordnetDir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := semantic.Write(&buf, entries); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gunzip(t, buf.Bytes()), gunzip(t, semantic.Embedded())) {
		t.Fatal("registry/semantic/wordnet.model.gz is not what the recipe trains from WordNet: run `make semantic-model` and commit the model")
	}
}
