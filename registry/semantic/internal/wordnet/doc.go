// Package wordnet reads the WordNet 3.0 database files Debian's wordnet-base installs
// (data.* and index.*) and trains the semantic model's word vectors from them (Train). Only
// the training recipe (internal/train, `make semantic-model`) and the drift test use it; a
// node loads the committed result.
package wordnet
