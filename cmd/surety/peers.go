package main

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

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/internal/p2p"
)

// The node remembers the peers it knew (connected, and the rest of its DHT routing table), so
// a restart rejoins the network through any of them when its bootstrap peers are gone (at
// 66f817e such a node found no peer); while running, p2p.Node.Rejoin redials them whenever
// the node has too few connections.
const (
	peersFile     = "peers.json"
	maxKnownPeers = 64
	peerSaveEvery = 15 * time.Second
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
func (n *node) keepKnownPeers(ctx context.Context) {
	t := time.NewTicker(peerSaveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			n.saveKnownPeers()
			return
		case <-t.C:
			n.saveKnownPeers()
		}
	}
}

func (n *node) saveKnownPeers() {
	if err := saveKnownPeers(n.cfg.DataDir, n.p2p.Known()); err != nil {
		n.cfg.Logger.Warn("save known peers", "err", err)
	}
}

// denyEvery is how often the node rereads its --p2p-deny file.
const denyEvery = time.Second

// readDenyFile reads the peer ids in path: whitespace- or comma-separated, '#' starting a
// comment. A missing file denies nobody.
func readDenyFile(path string) ([]peer.ID, error) {
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
func (n *node) keepDenying(ctx context.Context) {
	path := n.cfg.DenyFile
	var last string
	apply := func() {
		b, _ := os.ReadFile(path)
		if string(b) == last {
			return
		}
		ids, err := readDenyFile(path)
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
			return
		case <-t.C:
			apply()
		}
	}
}
