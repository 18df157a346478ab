package contracts_test

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/internal/units"
)

func embedded(t *testing.T) *chain.Embedded {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(2, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestDeployAndUseRootAnchor(t *testing.T) {
	ctx := context.Background()
	c := embedded(t)
	var progress []string
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, func(name string, _ common.Address) { progress = append(progress, name) })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"BountyEscrow", "StakeRegistry", "JobEscrow", "SuretyHook", "RootAnchor", "IdentityRegistry", "ReputationRegistry", "ValidationRegistry"}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if dep.ChainID != chain.EmbeddedChainID || dep.Block == 0 || dep.Deployer != crypto.PubkeyToAddress(chain.DevKey(0).PublicKey) {
		t.Errorf("deployment = %+v", dep)
	}
	if err := dep.Check(ctx, c); err != nil {
		t.Fatalf("Check: %v", err)
	}

	// Anchor a root from another account and read it back through the binding.
	anchor := contracts.NewRootAnchor()
	inst := anchor.Instance(c, dep.Contracts.RootAnchor)
	node := chain.DevKey(1)
	opts := bind.NewKeyedTransactor(node, big.NewInt(chain.EmbeddedChainID))
	root := common.HexToHash("0x1234")
	tx, err := bind.Transact(inst, opts, anchor.PackAnchor(7, root))
	if err != nil {
		t.Fatal(err)
	}
	receipt, err := chain.WaitMined(ctx, c, tx.Hash())
	if err != nil || receipt.Status != 1 {
		t.Fatalf("anchor: receipt %+v, err %v", receipt, err)
	}
	ev, err := anchor.UnpackAnchoredEvent(receipt.Logs[0])
	if err != nil {
		t.Fatal(err)
	}
	nodeAddr := crypto.PubkeyToAddress(node.PublicKey)
	if ev.Node != nodeAddr || ev.TreeSize != 7 || ev.Root != root {
		t.Errorf("Anchored event = %+v", ev)
	}
	size, err := bind.Call(inst, nil, anchor.PackLatestSize(nodeAddr), anchor.UnpackLatestSize)
	if err != nil || size != 7 {
		t.Errorf("latestSize = %d, %v; want 7", size, err)
	}

	// A stale anchor reverts with the custom error, decoded on the Go side.
	_, err = bind.Transact(inst, opts, anchor.PackAnchor(7, root))
	data, ok := contracts.RevertData(err)
	if !ok {
		t.Fatalf("stale anchor: err %v carries no revert data", err)
	}
	decoded, err := anchor.UnpackError(data)
	if err != nil {
		t.Fatalf("unpack revert: %v", err)
	}
	stale, ok := decoded.(*contracts.RootAnchorStaleTreeSize)
	if !ok {
		t.Fatalf("revert decoded as %T, want *RootAnchorStaleTreeSize", decoded)
	}
	if stale.Latest != 7 || stale.Given != 7 {
		t.Errorf("StaleTreeSize = %+v, want latest 7 given 7", stale)
	}
}

func TestCheckRefusesForeignDeployment(t *testing.T) {
	ctx := context.Background()
	c := embedded(t)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil) // a second deployment's registries
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(d *contracts.Deployment)
		want   error
	}{
		{"other chain id", func(d *contracts.Deployment) { d.ChainID = 31337 }, contracts.ErrWrongChain},
		{"no code at address", func(d *contracts.Deployment) { d.Contracts.BountyEscrow = common.HexToAddress("0xdead") }, contracts.ErrNoCode},
		{"a registry the escrow did not create", func(d *contracts.Deployment) { d.Contracts.StakeRegistry = d.Contracts.RootAnchor }, contracts.ErrForeignRegistry},
		{"a hook that is not the registry's job locker", func(d *contracts.Deployment) { d.Contracts.SuretyHook = d.Contracts.RootAnchor }, contracts.ErrForeignHook},
		{"a job escrow the hook does not serve", func(d *contracts.Deployment) { d.Contracts.JobEscrow = d.Contracts.RootAnchor }, contracts.ErrForeignHook},
		{"an identity registry the reputation registry does not serve", func(d *contracts.Deployment) { d.Contracts.IdentityRegistry = d.Contracts.RootAnchor }, contracts.ErrForeignERC8004},
		{"a reputation registry that is not one", func(d *contracts.Deployment) { d.Contracts.ReputationRegistry = d.Contracts.BountyEscrow }, contracts.ErrForeignERC8004},
		{"a validation registry of another identity registry", func(d *contracts.Deployment) { d.Contracts.ValidationRegistry = other.Contracts.ValidationRegistry }, contracts.ErrForeignERC8004},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := *dep
			tt.mutate(&d)
			if err := d.Check(ctx, c); !errors.Is(err, tt.want) {
				t.Errorf("Check = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestDeployWiresTheHook: the registry's job locker is the SuretyHook (its address predicted
// before it existed), the hook serves the JobEscrow and is on its allowlist, and JobEscrow
// charges the escrow's fee to its treasury.
func TestDeployWiresTheHook(t *testing.T) {
	ctx := context.Background()
	c := embedded(t)
	treasury := common.HexToAddress("0x7ea5")
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{FeeBps: 75, Treasury: treasury}, nil)
	if err != nil {
		t.Fatal(err)
	}
	opts := &bind.CallOpts{Context: ctx}
	reg := contracts.NewStakeRegistry()
	locker, err := bind.Call(reg.Instance(c, dep.Contracts.StakeRegistry), opts, reg.PackJobLocker(), reg.UnpackJobLocker)
	if err != nil || locker != dep.Contracts.SuretyHook {
		t.Errorf("jobLocker = %s, %v; want the hook %s", locker, err, dep.Contracts.SuretyHook)
	}
	jobs := contracts.NewJobEscrow()
	job := jobs.Instance(c, dep.Contracts.JobEscrow)
	if ok, err := bind.Call(job, opts, jobs.PackWhitelistedHooks(dep.Contracts.SuretyHook), jobs.UnpackWhitelistedHooks); err != nil || !ok {
		t.Errorf("whitelistedHooks(hook) = %v, %v", ok, err)
	}
	if fee, err := bind.Call(job, opts, jobs.PackPlatformFeeBP(), jobs.UnpackPlatformFeeBP); err != nil || fee.Int64() != 75 {
		t.Errorf("platformFeeBP = %v, %v; want 75", fee, err)
	}
	if tr, err := bind.Call(job, opts, jobs.PackPlatformTreasury(), jobs.UnpackPlatformTreasury); err != nil || tr != treasury {
		t.Errorf("platformTreasury = %s, %v", tr, err)
	}
	if err := dep.Check(ctx, c); err != nil {
		t.Errorf("Check: %v", err)
	}

	// Another owner: the deployer configures JobEscrow, then offers it the role (two steps).
	owner := common.HexToAddress("0x0e0e")
	dep, err = contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{Owner: owner}, nil)
	if err != nil {
		t.Fatal(err)
	}
	job = jobs.Instance(c, dep.Contracts.JobEscrow)
	if p, err := bind.Call(job, opts, jobs.PackPendingOwner(), jobs.UnpackPendingOwner); err != nil || p != owner {
		t.Errorf("pendingOwner = %s, %v; want %s", p, err, owner)
	}
	if ok, err := bind.Call(job, opts, jobs.PackWhitelistedHooks(dep.Contracts.SuretyHook), jobs.UnpackWhitelistedHooks); err != nil || !ok {
		t.Errorf("whitelistedHooks(hook) = %v, %v", ok, err)
	}
}

func TestParseDeployment(t *testing.T) {
	good := `{"chainId":31337,"block":1,"deployer":"0x0000000000000000000000000000000000000001","contracts":{"StakeRegistry":"0x00000000000000000000000000000000000000a1","BountyEscrow":"0x00000000000000000000000000000000000000a2","RootAnchor":"0x00000000000000000000000000000000000000aa","JobEscrow":"0x00000000000000000000000000000000000000a3","SuretyHook":"0x00000000000000000000000000000000000000a4","IdentityRegistry":"0x00000000000000000000000000000000000000b1","ReputationRegistry":"0x00000000000000000000000000000000000000b2","ValidationRegistry":"0x00000000000000000000000000000000000000b3"}}`
	tests := []struct {
		name    string
		in      string
		wantErr string
	}{
		{"valid", good, ""},
		{"not json", `chainId: 1`, "invalid character"},
		{"missing chain id", `{"contracts":{"RootAnchor":"0x00000000000000000000000000000000000000aa"}}`, "chainId is missing"},
		{"missing contract", `{"chainId":1,"contracts":{"StakeRegistry":"0x00000000000000000000000000000000000000a1","RootAnchor":"0x00000000000000000000000000000000000000aa"}}`, "contracts.BountyEscrow is missing"},
		{"unknown field", `{"chainId":1,"contract":{}}`, `unknown field "contract"`},
		{"bad address", `{"chainId":1,"contracts":{"RootAnchor":"0xzz"}}`, "hex"},
		{"short address", `{"chainId":1,"contracts":{"RootAnchor":"0xaa"}}`, "hex"},
		{"trailing data", good + ` {}`, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := contracts.ParseDeployment([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				out, err := d.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				again, err := contracts.ParseDeployment(out)
				if err != nil {
					t.Fatalf("round trip: %v", err)
				}
				if diff := cmp.Diff(d, again); diff != "" {
					t.Errorf("round trip (-first +second):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, contracts.ErrBadDeployment) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want ErrBadDeployment containing %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzParseDeployment(f *testing.F) {
	f.Add([]byte(`{"chainId":31337,"block":1,"deployer":"0x0000000000000000000000000000000000000001","contracts":{"StakeRegistry":"0x00000000000000000000000000000000000000a1","BountyEscrow":"0x00000000000000000000000000000000000000a2","RootAnchor":"0x00000000000000000000000000000000000000aa","JobEscrow":"0x00000000000000000000000000000000000000a3","SuretyHook":"0x00000000000000000000000000000000000000a4"}}`))
	f.Add([]byte(`{"chainId":1,"contracts":{}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := contracts.ParseDeployment(data)
		if err != nil {
			if !errors.Is(err, contracts.ErrBadDeployment) {
				t.Fatalf("error %v does not wrap ErrBadDeployment", err)
			}
			return
		}
		// Whatever parses must name a chain and every contract, and survive a round trip.
		if d.ChainID == 0 {
			t.Fatal("parsed a deployment without a chain id")
		}
		for _, n := range d.Contracts.Named() {
			if n.Address == (common.Address{}) {
				t.Fatalf("parsed a deployment without %s", n.Name)
			}
		}
		out, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := contracts.ParseDeployment(out); err != nil {
			t.Fatalf("round trip of %q: %v", out, err)
		}
	})
}

func TestDecodeRevertIgnoresOtherErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"plain error", errors.New("connection refused")},
		{"nil", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ce := contracts.DecodeRevert(tt.err); ce != nil {
				t.Errorf("DecodeRevert(%v) = %v, want nil", tt.err, ce)
			}
		})
	}
}

func TestDecodeRevertNamesEveryArgument(t *testing.T) {
	ctx := context.Background()
	c := embedded(t)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	escrowABI := contracts.NewBountyEscrow()
	// A call (no transaction) that reverts: bountyOf an id never posted.
	_, err = bind.Call(escrowABI.Instance(c, dep.Contracts.BountyEscrow), nil, escrowABI.PackBountyOf(big.NewInt(42)), escrowABI.UnpackBountyOf)
	ce := contracts.DecodeRevert(err)
	if ce == nil {
		t.Fatalf("err %v not decoded", err)
	}
	if got := ce.Error(); got != "UnknownBounty(id=42)" {
		t.Errorf("Error() = %q, want UnknownBounty(id=42)", got)
	}
	if errors.Unwrap(ce) != err {
		t.Errorf("CustomError does not wrap the transport error")
	}
	if ce.Contract != "BountyEscrow" {
		t.Errorf("Contract = %q, want BountyEscrow", ce.Contract)
	}
	if v, ok := contracts.Revert[contracts.BountyEscrowUnknownBounty](err); !ok || v.Id.Int64() != 42 {
		t.Errorf("Revert[BountyEscrowUnknownBounty] = %+v, %v; want id 42", v, ok)
	}

	// The registry's WrongStatus differs from the escrow's in its arguments: each is told
	// apart by the contract that declares it.
	stakeABI := contracts.NewStakeRegistry()
	_, err = bind.Call(stakeABI.Instance(c, dep.Contracts.StakeRegistry), nil, stakeABI.PackStake([32]byte{1}, big.NewInt(1)),
		func([]byte) (bool, error) { return true, nil })
	ce = contracts.DecodeRevert(err)
	if ce == nil || ce.Name != "WrongStatus" || ce.Contract != "StakeRegistry" || len(ce.Args) != 3 {
		t.Errorf("stake on an unbound agent: %+v (%v)", ce, err)
	}
	if v, ok := contracts.Revert[contracts.StakeRegistryWrongStatus](err); !ok || v.AgentId != [32]byte{1} || v.Status != 0 {
		t.Errorf("Revert[StakeRegistryWrongStatus] = %+v, %v; want agent 0x01…, status 0", v, ok)
	}
	if _, ok := contracts.Revert[contracts.BountyEscrowWrongStatus](err); ok {
		t.Errorf("the registry's WrongStatus decoded as the escrow's")
	}
}

// TestEveryCustomErrorHasItsGeneratedType decodes every custom error the node's contracts
// declare into the type abigen generated for it (named contract + error), so callers can
// switch on types instead of names and positions.
func TestEveryCustomErrorHasItsGeneratedType(t *testing.T) {
	for _, c := range []struct {
		name string
		meta *bind.MetaData
	}{{"BountyEscrow", &contracts.BountyEscrowMetaData}, {"StakeRegistry", &contracts.StakeRegistryMetaData}, {"RootAnchor", &contracts.RootAnchorMetaData},
		{"SuretyHook", &contracts.SuretyHookMetaData}, {"SuretyPool", &contracts.SuretyPoolMetaData}} {
		parsed, err := c.meta.ParseABI()
		if err != nil {
			t.Fatal(err)
		}
		for name, e := range parsed.Errors {
			t.Run(c.name+"."+name, func(t *testing.T) {
				ce := contracts.DecodeRevert(testutil.ZeroRevert(e))
				if ce == nil {
					t.Fatalf("%s not decoded", e.Sig)
				}
				// An error declared alike in two contracts (same selector) is the first's.
				got := reflect.TypeOf(ce.Value)
				if got == nil || got.Kind() != reflect.Pointer || got.Elem().Name() != ce.Contract+name || ce.Name != name {
					t.Errorf("%s decoded as %v (contract %s)", e.Sig, got, ce.Contract)
				}
			})
		}
	}
}

// TestStakeTokenReadsTheTokensDecimals: a deployment staking ETH reports Ether; one staking
// an ERC-20 reports that token's symbol and decimals, read from the token.
func TestStakeTokenReadsTheTokensDecimals(t *testing.T) {
	ctx := context.Background()
	c := embedded(t)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if addr, tok, err := dep.StakeToken(ctx, c); err != nil || addr != (common.Address{}) || tok != units.Ether {
		t.Errorf("ETH deployment: %s %+v %v", addr.Hex(), tok, err)
	}
	token, err := contracts.DeployDevToken(ctx, c, chain.DevKey(0), "Stake", "STK")
	if err != nil {
		t.Fatal(err)
	}
	dep, err = contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{StakeToken: token}, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr, tok, err := dep.StakeToken(ctx, c)
	if err != nil || addr != token || tok != (units.Token{Symbol: "STK", Decimals: 18}) {
		t.Errorf("ERC-20 deployment: %s %+v %v, want %s STK/18", addr.Hex(), tok, err, token.Hex())
	}
}

// TestCheckRefusesAForeignHook: a deployment file whose hook is its registry's job locker and
// serves its JobEscrow, but locks stake in another registry (two escrows of one deployer that
// predicted the same hook address), or that JobEscrow does not allow, fails Check.
func TestCheckRefusesAForeignHook(t *testing.T) {
	ctx := context.Background()
	c := embedded(t)
	dep, err := contracts.Deploy(ctx, c, chain.DevKey(0), contracts.DeployConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := chain.DevKey(1)
	deployer := crypto.PubkeyToAddress(key.PublicKey)
	opts := bind.NewKeyedTransactor(key, new(big.Int).SetUint64(dep.ChainID))
	opts.Context = ctx
	mined := func(what string, hash common.Hash) {
		t.Helper()
		r, err := chain.WaitMined(ctx, c, hash)
		if err != nil || r.Status != 1 {
			t.Fatalf("%s: %v %+v", what, err, r)
		}
	}
	create := func(what string, meta *bind.MetaData, input []byte) common.Address {
		t.Helper()
		addr, tx, err := bind.DeployContract(opts, common.FromHex(meta.Bin), c, input)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		mined(what, tx.Hash())
		return addr
	}
	nonce, err := c.PendingNonceAt(ctx, deployer)
	if err != nil {
		t.Fatal(err)
	}
	// Two escrows name the hook at nonce+3 as their registries' job locker; it is built on
	// the second registry.
	hookAt := crypto.CreateAddress(deployer, nonce+3)
	escrowABI := contracts.NewBountyEscrow()
	escrowIn := escrowABI.PackConstructor(deployer, deployer, 0, common.Address{}, 7*24*3600, big.NewInt(1e17), hookAt)
	escrow1 := create("BountyEscrow 1", &contracts.BountyEscrowMetaData, escrowIn)
	escrow2 := create("BountyEscrow 2", &contracts.BountyEscrowMetaData, escrowIn)
	registryOf := func(escrow common.Address) common.Address {
		r, err := bind.Call(escrowABI.Instance(c, escrow), &bind.CallOpts{Context: ctx}, escrowABI.PackStakeRegistry(), escrowABI.UnpackStakeRegistry)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	jobABI := contracts.NewJobEscrow()
	jobEscrow := create("JobEscrow", &contracts.JobEscrowMetaData, jobABI.PackConstructor(deployer, deployer))
	hook := create("SuretyHook", &contracts.SuretyHookMetaData, contracts.NewSuretyHook().PackConstructor(jobEscrow, registryOf(escrow2)))
	if hook != hookAt {
		t.Fatalf("hook at %s, predicted %s", hook, hookAt)
	}

	file := *dep
	file.Contracts.BountyEscrow, file.Contracts.StakeRegistry = escrow2, registryOf(escrow2)
	file.Contracts.JobEscrow, file.Contracts.SuretyHook = jobEscrow, hook
	if err := file.Check(ctx, c); !errors.Is(err, contracts.ErrForeignHook) {
		t.Errorf("a hook JobEscrow does not allow: Check = %v, want ErrForeignHook", err)
	}
	tx, err := bind.Transact(jobABI.Instance(c, jobEscrow), opts, jobABI.PackSetHookWhitelist(hook, true))
	if err != nil {
		t.Fatal(err)
	}
	mined("setHookWhitelist", tx.Hash())
	if err := file.Check(ctx, c); err != nil {
		t.Errorf("the hook's own deployment: Check = %v", err)
	}
	file.Contracts.BountyEscrow, file.Contracts.StakeRegistry = escrow1, registryOf(escrow1)
	if err := file.Check(ctx, c); !errors.Is(err, contracts.ErrForeignHook) {
		t.Errorf("a hook locking in another registry: Check = %v, want ErrForeignHook", err)
	}
}
