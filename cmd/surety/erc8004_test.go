package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/internal/chain"
)

// TestERC8004CLI: an agent registered with its DID's bound wallet is the DID's on the node,
// with the agent wallet that signed its consent; a client publishes an audit as feedback,
// import shows it; the owner cannot rate its own agent.
func TestERC8004CLI(t *testing.T) {
	waiting.Parallel(t) // a node (or devnet) of its own
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--dev-accounts", "4")
	base := node.apiURL(t)
	wallet := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }
	key := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", key))
	runOK(t, "", "did", "bind", "--node", base, "--key", key, "--dev-wallet", "2")

	out := runOK(t, "", "erc8004", "register", "--node", base, "--did", did, "--dev-account", "2", "--agent-wallet-dev-account", "3")
	for _, want := range []string{"agent 0 in IdentityRegistry", "owner     " + wallet(2), "wallet    " + wallet(3), "did       " + did, "/v1/erc8004/registration/" + did} {
		if !strings.Contains(out, want) {
			t.Errorf("register printed no %q:\n%s", want, out)
		}
	}
	leaf := strings.Repeat("ab", 32)
	r := start(t, "erc8004", "publish", "--node", base, "--subject", did, "--bounty", "1", "--score", "0.8", "--leaf", leaf, "--size", "1", "--dev-account", "2")
	if code := r.wait(t); code != exitFailure || !strings.Contains(r.stderr.String(), "owner or operator") {
		t.Errorf("the owner publishing about its own agent: exit %d\n%s", code, r.stderr)
	}
	out = runOK(t, "", "erc8004", "publish", "--node", base, "--subject", did, "--bounty", "1", "--score", "0.8", "--leaf", leaf, "--size", "1", "--dev-account", "1")
	if !strings.Contains(out, "feedback 1 to agent 0: 80.00%") || !strings.Contains(out, "surety/audit bounty:1") ||
		!strings.Contains(out, "/v1/log/proof/inclusion?leaf="+leaf+"&size=1") {
		t.Errorf("publish printed:\n%s", out)
	}
	out = runOK(t, "", "erc8004", "import", "--node", base, did)
	// Surety's own mirror of an audit is held, never counted a second time.
	if !strings.Contains(out, "agent 0 (owner "+wallet(2)) || !strings.Contains(out, "#1 from "+wallet(1)+": 80.00 surety/audit bounty:1") ||
		!strings.Contains(out, "counted in reputation: nothing") {
		t.Errorf("import printed:\n%s", out)
	}
	if out := runOK(t, "", "erc8004", "show", "--node", base, "0", "--json"); !strings.Contains(out, `"tag1": "surety/audit"`) {
		t.Errorf("show --json printed:\n%s", out)
	}

	// With a card, the node's registration file names it, its A2A card and the agent id, and
	// the agent's answer shows the id beside the DID.
	runOK(t, "", "agent", "register", "--node", base, "--key", key, "--name", "Worker", "--capability", "audit", "--wallet", wallet(2))
	if out := runOK(t, "", "agent", "show", "--node", base, did, "--json"); !strings.Contains(out, `"erc8004AgentIds": [`) {
		t.Errorf("agent show --json names no ERC-8004 agent id:\n%s", out)
	}
	res, err := http.Get(base + "/v1/erc8004/registration/" + did)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	reg, err := erc8004.ParseRegistration(body)
	if err != nil {
		t.Fatalf("the node's registration file: %v\n%s", err, body)
	}
	if reg.Name != "Worker" || reg.DID() != did || len(reg.Registrations) != 1 || reg.Registrations[0].AgentID != 0 ||
		!strings.Contains(string(body), `"name":"A2A","endpoint":"`+base+`/v1/agents/`+did+`/agent-card.json"`) {
		t.Errorf("registration file:\n%s", body)
	}
}

// TestERC8004OnAnvil: the same round trip against a node on Anvil, every transaction sent from
// the user's own wallets straight to Anvil: the DID's binding, the registration with the agent
// wallet's EIP-712 consent, a client's feedback; the node indexes it and imports it for the DID.
func TestERC8004OnAnvil(t *testing.T) {
	waiting.Parallel(t) // waits on the node's index
	d := deployOnAnvil(t, contracts.DeployConfig{})
	dir := t.TempDir()
	node := start(t, "node", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--rpc", d.URL, "--deployment", d.DepFile,
		"--confirmations", "0", "--p2p-listen", "/ip4/127.0.0.1/tcp/0")
	base := node.apiURL(t)
	wallet := func(i int) string { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey).Hex() }
	own := func(i int) []string {
		return []string{"--node", base, "--rpc-url", d.URL, "--deployment", d.DepFile, "--dev-account", strconv.Itoa(i)}
	}
	key := filepath.Join(dir, "agent.json")
	did := strings.TrimSpace(runOK(t, "", "did", "new", "--out", key))
	runOK(t, "", append([]string{"did", "bind", "--key", key}, own(2)...)...)
	out := runOK(t, "", append([]string{"erc8004", "register", "--did", did, "--agent-wallet-dev-account", "3"}, own(2)...)...)
	if !strings.Contains(out, "owner     "+wallet(2)) || !strings.Contains(out, "wallet    "+wallet(3)) {
		t.Errorf("register printed:\n%s", out)
	}
	runOK(t, "", append([]string{"erc8004", "publish", "--subject", did, "--bounty", "7", "--score", "0.9", "--leaf", strings.Repeat("cd", 32), "--size", "3"}, own(1)...)...)
	out = runOK(t, "", "erc8004", "import", "--node", base, did)
	if !strings.Contains(out, "#1 from "+wallet(1)+": 90.00 surety/audit bounty:7") {
		t.Errorf("import printed:\n%s", out)
	}
}
