package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/registry"
)

// loadKnownPeers reads the peers a previous run was connected to; none when there is no file
// or it cannot be read (the node then starts from its bootstrap peers alone).
func loadKnownPeers(dataDir string, log *slog.Logger) []peer.AddrInfo {
	b, err := os.ReadFile(filepath.Join(dataDir, peersFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var addrs []string
	if err == nil {
		err = json.Unmarshal(b, &addrs)
	}
	if err != nil {
		log.Warn("known peers unreadable; starting from the bootstrap peers", "file", peersFile, "err", err)
		return nil
	}
	infos, err := p2p.ParseAddrs(addrs)
	if err != nil {
		log.Warn("known peers unreadable; starting from the bootstrap peers", "file", peersFile, "err", err)
		return nil
	}
	return infos
}

// saveKnownPeers writes peers (the connected ones first; at most maxKnownPeers), whole or not
// at all; an empty list keeps the previous one.
func saveKnownPeers(dataDir string, peers []peer.AddrInfo) error {
	var addrs []string
	for _, ai := range peers {
		if len(addrs) >= maxKnownPeers {
			break
		}
		full, err := peer.AddrInfoToP2pAddrs(&ai)
		if err != nil {
			continue
		}
		for _, a := range full {
			addrs = append(addrs, a.String())
		}
	}
	if len(addrs) == 0 {
		return nil
	}
	b, err := json.Marshal(addrs)
	if err != nil {
		return err
	}
	path := filepath.Join(dataDir, peersFile)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// withKnownPeers adds known peers to the bootstrap list, once each, leaving out self.
func withKnownPeers(boot, known []peer.AddrInfo, self peer.ID) []peer.AddrInfo {
	seen := map[peer.ID]bool{self: true}
	var out []peer.AddrInfo
	for _, list := range [][]peer.AddrInfo{boot, known} {
		for _, ai := range list {
			if !seen[ai.ID] {
				seen[ai.ID] = true
				out = append(out, ai)
			}
		}
	}
	return out
}

// keepKnownPeers saves the connected peers every peerSaveEvery until ctx ends, then once more.
func (n *Node) keepKnownPeers(ctx context.Context) error {
	t := time.NewTicker(peerSaveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			n.saveKnownPeers()
			return nil
		case <-t.C:
			n.saveKnownPeers()
		}
	}
}

func (n *Node) saveKnownPeers() {
	if err := saveKnownPeers(n.cfg.DataDir, n.p2p.Known()); err != nil {
		n.cfg.Logger.Warn("save known peers", "err", err)
	}
}

// ReadDenyFile reads the peer ids in path (Config.DenyFile): whitespace- or comma-separated,
// '#' starting a comment. A missing file denies nobody.
func ReadDenyFile(path string) ([]peer.ID, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []peer.ID
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			id, err := peer.Decode(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a peer id", path, f)
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// keepDenying applies the --p2p-deny file whenever it changes, until ctx ends.
func (n *Node) keepDenying(ctx context.Context) error {
	path := n.cfg.DenyFile
	var last string
	apply := func() {
		b, _ := os.ReadFile(path)
		if string(b) == last {
			return
		}
		ids, err := ReadDenyFile(path)
		if err != nil {
			n.cfg.Logger.Warn("p2p deny list unreadable; keeping the previous one", "err", err)
			return
		}
		last = string(b)
		n.p2p.Deny(ids)
		n.cfg.Logger.Info("p2p deny list applied", "peers", len(ids))
	}
	apply()
	t := time.NewTicker(denyEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			apply()
		}
	}
}

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
