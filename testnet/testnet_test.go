package testnet_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/testnet"
)

func TestStartDeploysOnAnvil(t *testing.T) {
	ctx := context.Background()
	var steps []string
	dn, err := testnet.Start(ctx, testnet.Config{
		AnvilBin:    testutil.Tool(t, "anvil"),
		DevAccounts: 3,
		Deploy:      contracts.DeployConfig{FeeBps: 75},
		Progress:    func(format string, _ ...any) { steps = append(steps, format) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dn.Stop()
	if len(steps) < 3 {
		t.Errorf("progress lines = %q, want anvil, funding and deploy steps", steps)
	}

	c, err := ethclient.DialContext(ctx, dn.RPC())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := dn.Deployment.Check(ctx, c); err != nil {
		t.Fatalf("deployment does not match the devnet: %v", err)
	}
	if dn.Deployment.ChainID != 31337 {
		t.Errorf("chain id = %d, want anvil's 31337", dn.Deployment.ChainID)
	}
	if want := crypto.PubkeyToAddress(chain.DevKey(0).PublicKey); dn.Deployment.Deployer != want {
		t.Errorf("deployer = %s, want dev account 0 %s", dn.Deployment.Deployer, want)
	}
	// Anvil's own dev accounts (from its test mnemonic) are chain.DevKey's: Surety, cast and a
	// plain anvil agree on every dev key.
	var accounts []common.Address
	if err := c.Client().CallContext(ctx, &accounts, "eth_accounts"); err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 10 {
		t.Fatalf("anvil lists %d accounts, want its 10", len(accounts))
	}
	for i, addr := range accounts {
		if ours := crypto.PubkeyToAddress(chain.DevKey(i).PublicKey); ours != addr {
			t.Errorf("anvil's account %d is %s, chain.DevKey(%d) is %s", i, addr, i, ours)
		}
	}
	bal, err := c.BalanceAt(ctx, crypto.PubkeyToAddress(chain.DevKey(2).PublicKey), nil)
	if err != nil {
		t.Fatal(err)
	}
	if bal.Cmp(chain.DefaultDevBalance) != 0 {
		t.Errorf("dev account 2 holds %s, want %s", bal, chain.DefaultDevBalance)
	}

	// Foundry's own client reads the deployed contracts at the recorded addresses.
	cast := testutil.Tool(t, "cast")
	for _, tt := range []struct {
		addr common.Address
		sig  string
		want string
	}{
		{dn.Deployment.Contracts.BountyEscrow, "feeBps()(uint16)", "75"},
		{dn.Deployment.Contracts.BountyEscrow, "stakeRegistry()(address)", dn.Deployment.Contracts.StakeRegistry.Hex()},
		{dn.Deployment.Contracts.StakeRegistry, "unbondDelay()(uint64)", "604800"},
		{dn.Deployment.Contracts.StakeRegistry, "locker()(address)", dn.Deployment.Contracts.BountyEscrow.Hex()},
	} {
		args := []string{"call", tt.addr.Hex(), tt.sig, "--rpc-url", dn.RPC()}
		out, err := exec.Command(cast, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("cast %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		// cast prints large numbers with a scientific hint after them: "604800 [6.048e5]".
		if got := strings.Fields(string(out)); len(got) == 0 || !strings.EqualFold(got[0], tt.want) {
			t.Errorf("cast call %s = %q, want %q", tt.sig, got, tt.want)
		}
	}

	dn.Stop()
	<-dn.Anvil.Exited()
}

// TestFreePortsAreABlock: a network numbers its nodes' ports from a base, so every port of
// the block must be free, not only the first.
func TestFreePortsAreABlock(t *testing.T) {
	base, err := testnet.FreePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	for p := base; p < base+6; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d of the block from %d: %v", p, base, err)
		}
		l.Close()
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("UDP port %d of the block from %d: %v", p, base, err)
		}
		u.Close()
	}
	// Below the ephemeral range, where no outgoing connection is handed a port of it.
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var lo int
		if _, err := fmt.Sscan(string(b), &lo); err == nil && base+6 > lo {
			t.Errorf("block %d-%d reaches the ephemeral range from %d", base, base+5, lo)
		}
	}
}

func TestStartNetworkRefusesBadConfigs(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  testnet.NetworkConfig
	}{
		{"no nodes", testnet.NetworkConfig{Bin: "surety", Dir: t.TempDir()}},
		{"more nodes than dev wallets", testnet.NetworkConfig{Bin: "surety", Dir: t.TempDir(), Nodes: testnet.DevAccounts + 1}},
		{"no binary", testnet.NetworkConfig{Dir: t.TempDir(), Nodes: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if nw, err := testnet.StartNetwork(t.Context(), tt.cfg); err == nil {
				nw.Close()
				t.Fatal("started")
			}
		})
	}
}
