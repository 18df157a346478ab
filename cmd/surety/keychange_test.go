package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/keystore"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
)

// TestRotateAndRevokeFromEveryWallet rotates an agent to a new key and then revokes the new
// key with the CLI, from a wallet the node holds, from the user's own keystore and from a
// wallet behind Clef (sent through the node's relay; own wallets revoke by the DID alone,
// without its key), on Anvil. After the rotation the old key's envelope is refused and the new key acts (more
// stake); after the revocation the new key's envelope is refused. Refusals are one line
// that names the problem and the way out, and send nothing: a wallet that never bound the
// DID, a DID already rotated or revoked, a node-held wallet without the DID's key, a --to key
// that does not exist.
func TestRotateAndRevokeFromEveryWallet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil and a node")
	}
	waiting.Parallel(t) // mostly waits on processes
	devnet := deployOnAnvil(t, contracts.DeployConfig{})
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--rpc-url", devnet.URL, "--deployment", devnet.DepFile,
		"--dev-wallets", "--dev-accounts", "4", "--p2p-listen", "/ip4/127.0.0.1/tcp/0", "--log-level", "warn")
	base := node.apiURL(t)
	addr := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }

	// The user's own wallet: Anvil's account 5, which the node does not hold, in a keystore.
	ks := filepath.Join(dir, "own.keystore")
	enc, err := keystore.EncryptKey(&keystore.Key{Id: uuid.New(), Address: crypto.PubkeyToAddress(chain.DevKey(5).PublicKey), PrivateKey: chain.DevKey(5)},
		"s3cret", keystore.LightScryptN, keystore.LightScryptP)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ks, enc, 0o600); err != nil {
		t.Fatal(err)
	}
	clef := testutil.StartClef(t, chain.DevKey(7)) // a wallet behind Clef (a stand-in speaking its API)
	behindClef := []string{"--signer", clef.URL, "--from", clef.Address().Hex()}
	stranger := map[string]string{"ETH_PRIVATE_KEY": hex.EncodeToString(crypto.FromECDSA(chain.DevKey(6)))} // funded, bound to nothing

	type result struct {
		code           int
		stdout, stderr string
	}
	run := func(vars map[string]string, stdin string, args ...string) result {
		t.Helper()
		env := map[string]string{"SURETY_NODE": base} // the node of every command that talks to one
		for k, v := range vars {
			env[k] = v
		}
		r := startWithEnv(t, stdin, env, args...)
		code := r.wait(t)
		return result{code, r.stdout.String(), r.stderr.String()}
	}
	ok := func(vars map[string]string, args ...string) string {
		t.Helper()
		r := run(vars, "", args...)
		if r.code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	refused := func(want string, code int, vars map[string]string, args ...string) {
		t.Helper()
		r := run(vars, "", args...)
		// Progress lines may come first; the error is one line, and the last.
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		errors := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "surety ") {
				errors++
			}
		}
		if r.code != code || !strings.Contains(lines[len(lines)-1], want) || errors != 1 {
			t.Errorf("%v: exit %d, want %d and one line saying %q:\n%s", args, r.code, code, want, r.stderr)
		}
	}
	envelope := func(keyFile string) string {
		t.Helper()
		r := run(nil, `{"state":"discussion","body":{"q":"ready?"}}`, "envelope", "sign", "--key", keyFile)
		if r.code != exitOK {
			t.Fatalf("envelope sign: %s", r.stderr)
		}
		f := keyFile + ".jws"
		if err := os.WriteFile(f, []byte(r.stdout), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}

	tests := []struct {
		name   string
		bind   []string // how did bind names the wallet
		wallet []string // how the other commands name it
		vars   map[string]string
		addr   string
		other  []string // a wallet that never bound the DID
		// byDID: revoke by naming the DID, without its key (own wallets only).
		byDID bool
	}{
		{"a wallet the node holds", []string{"--dev-account", "2"}, []string{"--wallet", addr(2)}, nil, addr(2), []string{"--wallet", addr(3)}, false},
		{"your own keystore", []string{"--keystore", ks}, []string{"--keystore", ks}, map[string]string{"ETH_PASSWORD": "s3cret"}, addr(5), nil, true},
		{"your own wallet behind Clef", behindClef, behindClef, nil, addr(7), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			if err := os.MkdirAll(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			oldKey, nextKey := filepath.Join(sub, "agent.json"), filepath.Join(sub, "agent2.json")
			old := strings.TrimSpace(ok(nil, "did", "new", "--out", oldKey))
			next := strings.TrimSpace(ok(nil, "did", "new", "--out", nextKey))
			with := func(args ...string) []string { return append(args, tt.wallet...) }
			ok(tt.vars, append([]string{"did", "bind", "--key", oldKey}, tt.bind...)...)
			ok(tt.vars, with("stake", "add", "--key", oldKey, "--amount", "1ether")...)
			oldMsg := envelope(oldKey)

			refused("make the new key first with 'surety did new --out", exitUsage, tt.vars, with("did", "rotate", "--key", oldKey, "--to", filepath.Join(sub, "missing.json"))...)
			refused("rotate to a new key", exitUsage, tt.vars, with("did", "rotate", "--key", oldKey, "--to", oldKey)...)
			r := run(tt.vars, "", with("did", "rotate", "--key", oldKey, "--to", nextKey)...)
			if r.code != exitOK || !strings.Contains(r.stdout, "rotated "+old+" to "+next+" under wallet "+tt.addr+" on chain") ||
				!strings.Contains(r.stdout, next+" under wallet "+tt.addr+": bound") || !strings.Contains(r.stdout, "staked     1 ETH") {
				t.Fatalf("did rotate: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "did rotate: mined") {
				t.Errorf("did rotate showed no progress:\n%s", r.stderr)
			}
			// The old key is refused at the node; the new one acts from the same wallet.
			refused("rotated", exitFailure, nil, "envelope", "verify", "--node", base, oldMsg)
			if out := ok(tt.vars, with("stake", "add", "--key", nextKey, "--amount", "0.5ether")...); !strings.Contains(out, "staked     1.5 ETH") {
				t.Errorf("stake add by the successor printed:\n%s", out)
			}
			nextMsg := envelope(nextKey)
			ok(nil, "envelope", "verify", "--node", base, nextMsg)
			refused("already rotated away under wallet "+tt.addr, exitFailure, tt.vars, with("did", "rotate", "--key", oldKey, "--to", filepath.Join(sub, "agent2.json"))...)

			// Revoke the successor: not from a wallet that never bound it; then from its own.
			other := tt.other
			otherVars := tt.vars
			if other == nil {
				other, otherVars = nil, stranger
			}
			target := []string{"--key", nextKey}
			if tt.byDID {
				target = []string{next}
			}
			refused("is not a controller of "+next, exitFailure, otherVars, append(append([]string{"did", "revoke"}, target...), other...)...)
			if !tt.byDID {
				refused("the DID's --key signs the request", exitUsage, tt.vars, with("did", "revoke", next)...)
			}
			r = run(tt.vars, "", append(append([]string{"did", "revoke", "--json"}, target...), tt.wallet...)...)
			var ans struct {
				TxHash string `json:"txHash"`
				Stake  struct {
					Status string `json:"status"`
				} `json:"stake"`
				Key struct {
					Status string `json:"status"`
				} `json:"key"`
			}
			if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &ans) != nil || ans.TxHash == "" || ans.Stake.Status != "revoked" || ans.Key.Status != "revoked" {
				t.Fatalf("did revoke --json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			refused("revoked", exitFailure, nil, "envelope", "verify", "--node", base, nextMsg)
			refused(next+" is already revoked under wallet "+tt.addr+": nothing sent", exitFailure, tt.vars, append(append([]string{"did", "revoke"}, target...), tt.wallet...)...)
		})
	}
	// Clef signed the bind's binding and the rotation's successor binding as typed data.
	if n := clef.SignedTyped.Load(); n != 2 {
		t.Errorf("Clef signed %d bindings, want 2 (the bind, the rotation's successor)", n)
	}
	// The human line, from the node's wallet, for a DID bound through it.
	key := filepath.Join(dir, "market.json")
	did := strings.TrimSpace(ok(nil, "did", "new", "--out", key))
	ok(nil, "did", "bind", "--key", key, "--dev-account", "1")
	if out := ok(nil, "did", "revoke", "--key", key, "--wallet", addr(1)); !strings.Contains(out, "revoked "+did+" under wallet "+addr(1)+" on chain") {
		t.Errorf("did revoke printed:\n%s", out)
	}
}
