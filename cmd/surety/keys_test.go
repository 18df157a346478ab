package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/anvil"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/p2p"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/testutil/apitest"
	"github.com/surety-ioa/surety/node"
)

// TestExposedNodesNeedAPassphrase: at 66f817e a node listening beyond loopback, or on a real
// chain, kept its keys under a generated passphrase stored beside them, with a warning. Now it
// refuses to start without a passphrase from the environment or a file outside the data dir.
func TestExposedNodesNeedAPassphrase(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	inside := filepath.Join(data, "pass")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inside, []byte("a secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Refused before the API listens (so these never bind beyond loopback).
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"listening beyond loopback", []string{"--listen", "0.0.0.0:0"}, "beyond loopback"},
		{"with the passphrase beside the keys", []string{"--listen", "0.0.0.0:0", "--passphrase-file", inside}, "inside --data-dir"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := start(t, append([]string{"node", "--data-dir", data}, tt.args...)...)
			if code := r.wait(t); code != exitUsage || !strings.Contains(r.stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, r.stderr, exitUsage, tt.want)
			}
		})
	}

	// A chain that is not a devnet (here an Anvil with chain id 5).
	a, err := anvil.Start(context.Background(), anvil.Config{Bin: testutil.Tool(t, "anvil"), ChainID: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Stop)
	for addr, bal := range chain.DevAlloc(1, chain.DefaultDevBalance) {
		if err := a.SetBalance(context.Background(), addr, bal); err != nil {
			t.Fatal(err)
		}
	}
	client, err := chain.Dial(context.Background(), a.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	dep, err := contracts.Deploy(context.Background(), client, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	depFile := filepath.Join(dir, "deployment.json")
	if err := writeDeployment(depFile, dep); err != nil {
		t.Fatal(err)
	}
	args := []string{"node", "--data-dir", filepath.Join(dir, "rpc"), "--listen", "127.0.0.1:0", "--rpc", a.URL, "--deployment", depFile}
	r := start(t, args...)
	if code := r.wait(t); code != exitUsage || !strings.Contains(r.stderr.String(), "chain 5, which is not a devnet") {
		t.Errorf("a node on chain 5 without a passphrase: exit %d, stderr %q", code, r.stderr)
	}
	ok := startWithEnv(t, "", map[string]string{passphraseEnv: "given by the operator"}, args...)
	base := ok.apiURL(t)
	if info := apitest.GetInfo(t, base); info.Chain.ID != 5 || info.Chain.Confirmations != node.PublicConfirmations {
		t.Errorf("with $%s the node starts on chain 5, waiting %d confirmations (not a devnet): %+v", passphraseEnv, node.PublicConfirmations, info.Chain)
	}
	// Anvil's test keys are public: the CLI will not pay from one on a chain that is not a
	// devnet, nor deploy from one there.
	key := filepath.Join(dir, "agent.json")
	runOK(t, "", "did", "new", "--out", key)
	for _, args := range [][]string{
		{"stake", "add", "--key", key, "--dev-account", "1", "--amount", "1ether", "--node", base},
		{"deploy", "--dev-account", "0", "--rpc-url", a.URL, "--out", filepath.Join(dir, "d2.json")},
	} {
		r := start(t, args...)
		if code := r.wait(t); code != exitUsage || !strings.Contains(r.stderr.String(), "not a devnet") {
			t.Errorf("%v on chain 5: exit %d, stderr %q", args[:2], code, r.stderr)
		}
	}
}

// TestPeerKeyIsSealed: the node's libp2p key is encrypted under the passphrase like its other
// keys (at 66f817e p2p.key was plaintext), a plaintext one from an older node is sealed in
// place, and the peer id survives both.
func TestPeerKeyIsSealed(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	data := t.TempDir()
	old, err := p2p.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := crypto.MarshalPrivateKey(old)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "p2p.key")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	want, _ := peer.IDFromPrivateKey(old)
	for round := range 2 {
		r := start(t, "node", "--data-dir", data, "--listen", "127.0.0.1:0", "--dev-accounts", "1")
		if got := apitest.GetInfo(t, r.apiURL(t)).Peer.ID; got != want.String() {
			t.Errorf("round %d: peer id %s, want the key's %s", round, got, want)
		}
		r.cancel()
		r.wait(t)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var sealed map[string]json.RawMessage
		if json.Unmarshal(b, &sealed) != nil || sealed["kdf"] == nil || sealed["ciphertext"] == nil {
			t.Errorf("round %d: p2p.key is not sealed: %.60q", round, b)
		}
		if strings.Contains(string(b), string(raw)) {
			t.Errorf("round %d: p2p.key holds the key in the clear", round)
		}
	}
}
