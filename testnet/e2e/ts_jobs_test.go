package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

// TestTypeScriptAgentsCompeteOnAJob: TypeScript agents written against clients/ts alone
// (examples/competing-jobs) play Surety's ERC-8183 extras from their own wallets: three
// workers compete on one job and the client pays two of them 70/30, then a two-part milestone
// job pays its worker part by part. The Go side starts the network, gives the client a token,
// and reads the outcome back from the node and the chain.
func TestTypeScriptAgentsCompeteOnAJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Anvil, a node process and node")
	}
	waiting.Parallel(t) // waits on its node process
	nodeBin := tsClient(t)
	nw := startNetwork(t, 1, testnet.Config{}, func(int) []string { return []string{"--log-level", "warn"} })
	base := nw.Nodes[0].URL()
	client := dialChain(t, nw)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	token, err := contracts.DeployDevToken(ctx, client, chain.DevKey(0), "Dev", "DEV")
	if err != nil {
		t.Fatal(err)
	}
	addr := func(i int) common.Address { return crypto.PubkeyToAddress(chain.DevKey(i).PublicKey) }
	tok := contracts.NewDevToken()
	opts := bind.NewKeyedTransactor(chain.DevKey(0), big.NewInt(int64(nw.Devnet.Deployment.ChainID)))
	tx, err := bind.Transact(tok.Instance(client, token), opts, tok.PackMint(addr(1), new(big.Int).Mul(big.NewInt(1e18), big.NewInt(100))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind.WaitMined(ctx, client, tx.Hash()); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 1; i <= 5; i++ { // the client, the arbiter, three workers
		keys = append(keys, "0x"+hex.EncodeToString(crypto.FromECDSA(chain.DevKey(i))))
	}
	cmd := exec.CommandContext(ctx, nodeBin, "dist/examples/competing-jobs/main.js")
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "SURETY_NODE="+base, "SURETY_RPC="+nw.Devnet.RPC(), "SURETY_TOKEN="+token.Hex(), "SURETY_KEYS="+strings.Join(keys, ","))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	t.Logf("competing jobs:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("the TypeScript agents failed: %v\n%s", err, testutil.Tail(stderr.String(), 4000))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got struct {
		OK  bool   `json:"ok"`
		Job string `json:"job"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil || !got.OK {
		t.Fatalf("no summary line (%v): %q", err, lines[len(lines)-1])
	}
	var j struct {
		Status string `json:"status"`
		Surety struct {
			Settlement struct {
				Outcome   string `json:"outcome"`
				ToWorkers string `json:"toWorkers"`
			} `json:"settlement"`
		} `json:"surety"`
	}
	mustGetJSON(t, base+"/v1/jobs/"+got.Job, &j)
	if j.Status != "completed" || j.Surety.Settlement.Outcome != "approved" || j.Surety.Settlement.ToWorkers != "10000000000000000000" {
		t.Errorf("job %s at the node: %+v", got.Job, j)
	}
	// On chain: 7 and 3 tokens to the two winners (plus the milestones' 3 to the first),
	// nothing to the loser.
	balance := func(i int) string {
		b, err := bind.Call(tok.Instance(client, token), nil, tok.PackBalanceOf(addr(i)), tok.UnpackBalanceOf)
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if balance(3) != "10000000000000000000" || balance(5) != "3000000000000000000" || balance(4) != "0" {
		t.Errorf("workers hold %s, %s and %s; want 10 (7 + the milestones' 3), 0 and 3", balance(3), balance(4), balance(5))
	}
}
