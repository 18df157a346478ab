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
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/registry"
)

// loadPeerKey reads the node's libp2p key from DATA_DIR/p2p.key, creating it on first start,
// so the node keeps its peer id across restarts. The key is sealed under the passphrase that
// encrypts the node's other keys (store.Seal); a plaintext key from an older node is read once
// and sealed in place.
func loadPeerKey(dataDir string, store *identity.Store) (crypto.PrivKey, error) {
	path := filepath.Join(dataDir, "p2p.key")
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		raw, err := store.Unseal(b)
		if errors.Is(err, identity.ErrWrongPassphrase) {
			return nil, fmt.Errorf("the passphrase does not open %s", path)
		}
		legacy := errors.Is(err, identity.ErrNotSealed)
		if legacy {
			raw = b
		} else if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		k, err := crypto.UnmarshalPrivateKey(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if legacy {
			if err := sealPeerKey(path, store, raw); err != nil {
				return nil, err
			}
		}
		return k, nil
	case !errors.Is(err, fs.ErrNotExist):
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
	if err := sealPeerKey(path, store, raw); err != nil {
		return nil, err
	}
	return k, nil
}

// sealPeerKey writes the libp2p key at path, sealed under the store's passphrase: whole, in
// place of what was there (a new file renamed over it).
func sealPeerKey(path string, store *identity.Store, raw []byte) error {
	blob, err := store.Seal(raw)
	if err != nil {
		return fmt.Errorf("seal %s: %w", path, err)
	}
	tmp := path + ".new"
	_ = os.Remove(tmp) // left by a crash in between
	if err := writeSecretFile(tmp, blob); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
// peersOf serves the API's view of the p2p host and the registry's DHT writes.
type peersOf struct {
	n   *p2p.Node
	reg *registry.Network
}

func (p peersOf) Self() (string, []string) { return p.n.Host.ID().String(), p.n.Addrs() }

func (p peersOf) Connected() []api.Peer {
	var out []api.Peer
	for _, ai := range p.n.Connected() {
		pe := api.Peer{ID: ai.ID.String()}
		if score, ok := p.n.Score(ai.ID); ok {
			pe.Score = &score
		}
		if pen := p.n.Penalty(ai.ID); pen > 0 {
			pe.Penalty = &pen
		}
		for _, a := range ai.Addrs {
			pe.Addrs = append(pe.Addrs, a.String())
		}
		out = append(out, pe)
	}
	return out
}

func (p peersOf) Meshes() []api.Mesh {
	var out []api.Mesh
	for _, m := range p.n.Meshes() {
		out = append(out, api.Mesh{Topic: m.Topic, Peers: m.Peers, InMesh: m.InMesh, Formed: m.Formed})
	}
	return out
}

func (p peersOf) PendingPuts() int { return p.reg.PendingPuts() }

var _ api.Peers = peersOf{}

// peerBindingPayload is what the node's DID signs to claim its peer id.
func peerBindingPayload(did, peerID string) []byte {
	b, _ := json.Marshal(map[string]string{"did": did, "peerId": peerID})
	return b
}
