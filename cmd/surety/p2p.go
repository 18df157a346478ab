package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/libp2p/go-libp2p/core/crypto"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/internal/p2p"
)

// loadPeerKey reads the node's libp2p key from DATA_DIR/p2p.key, creating it on first start,
// so the node keeps its peer id across restarts.
func loadPeerKey(dataDir string) (crypto.PrivKey, error) {
	path := filepath.Join(dataDir, "p2p.key")
	b, err := os.ReadFile(path)
	if err == nil {
		k, err := crypto.UnmarshalPrivateKey(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	k, err := p2p.GenerateKey()
	if err != nil {
		return nil, err
	}
	raw, err := crypto.MarshalPrivateKey(k)
	if err != nil {
		return nil, err
	}
	if err := writeSecretFile(path, raw); err != nil {
		return nil, err
	}
	return k, nil
}

// splitList splits a comma-separated flag value.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// peersOf adapts a p2p node to the API.
type peersOf struct{ n *p2p.Node }

func (p peersOf) Self() (string, []string) { return p.n.Host.ID().String(), p.n.Addrs() }

func (p peersOf) Connected() []api.Peer {
	var out []api.Peer
	for _, ai := range p.n.Connected() {
		pe := api.Peer{ID: ai.ID.String()}
		if score, ok := p.n.Score(ai.ID); ok {
			pe.Score = &score
		}
		for _, a := range ai.Addrs {
			pe.Addrs = append(pe.Addrs, a.String())
		}
		out = append(out, pe)
	}
	return out
}

var _ api.Peers = peersOf{}

// peerBindingPayload is what the node's DID signs to claim its peer id.
func peerBindingPayload(did, peerID string) []byte {
	b, _ := json.Marshal(map[string]string{"did": did, "peerId": peerID})
	return b
}
