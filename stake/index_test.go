package stake_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/internal/chain"
	"github.com/surety-ioa/surety/internal/sqlite"
	"github.com/surety-ioa/surety/internal/testutil"
	"github.com/surety-ioa/surety/stake"
)

var eth = big.NewInt(1e18)

type fixture struct {
	t   *testing.T
	c   *chain.Embedded
	dep *contracts.Deployment
	abi *contracts.StakeRegistry
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c, err := chain.NewEmbedded(chain.EmbeddedConfig{Alloc: chain.DevAlloc(5, chain.DefaultDevBalance)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dep, err := contracts.Deploy(context.Background(), c, chain.DevKey(0), contracts.DeployConfig{UnbondDelay: 60}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, c: c, dep: dep, abi: contracts.NewStakeRegistry()}
}

func (f *fixture) index(db *testutil.SQL) *stake.Index {
	f.t.Helper()
	ctx := context.Background()
	row, err := sqlite.EnterChain(ctx, db.DB, sqlite.Chain{Key: "test", ChainID: chain.EmbeddedChainID, Genesis: "g", Contracts: "{}"})
	if err != nil {
		f.t.Fatal(err)
	}
	ix, err := stake.NewIndex(ctx, stake.Config{DB: db.DB, Chain: row, Client: f.c, ChainID: chain.EmbeddedChainID,
		Registry: f.dep.Contracts.StakeRegistry, StartBlock: f.dep.Block})
	if err != nil {
		f.t.Fatal(err)
	}
	return ix
}

// send calls the registry from key and fails the test when the call reverts.
func (f *fixture) send(key *ecdsa.PrivateKey, data []byte, value *big.Int) {
	f.t.Helper()
	if err := f.trySend(key, data, value); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) trySend(key *ecdsa.PrivateKey, data []byte, value *big.Int) error {
	return f.trySendTo(key, f.dep.Contracts.StakeRegistry, data, value)
}

func (f *fixture) trySendTo(key *ecdsa.PrivateKey, to common.Address, data []byte, value *big.Int) error {
	ctx := context.Background()
	opts := bind.NewKeyedTransactor(key, big.NewInt(chain.EmbeddedChainID))
	opts.Value = value
	tx, err := bind.Transact(f.abi.Instance(f.c, to), opts, data)
	if err != nil {
		return err
	}
	r, err := bind.WaitMined(ctx, f.c, tx.Hash())
	if err != nil {
		return err
	}
	if r.Status != 1 {
		return errors.New("reverted")
	}
	return nil
}

// slash takes amount of the stake worker holds for agent the only way the registry allows: a
// bounty with that minimum stake, claimed by the worker (locking it, see lock), submitted,
// rejected by the poster and resolved by its arbiter with a slash of all of it.
func (f *fixture) slash(worker *ecdsa.PrivateKey, agent common.Hash, amount *big.Int) {
	f.t.Helper()
	escrowABI := contracts.NewBountyEscrow()
	poster, arbiter := chain.DevKey(3), chain.DevKey(4)
	id, terms := f.lock(worker, agent, amount)
	to, w := f.dep.Contracts.BountyEscrow, crypto.PubkeyToAddress(worker.PublicKey)
	for _, step := range []struct {
		key  *ecdsa.PrivateKey
		data []byte
	}{
		{worker, escrowABI.PackSubmit(id, terms, w, common.Hash{1})},
		{poster, escrowABI.PackReject(id, terms, w, common.Hash{})},
		{arbiter, escrowABI.PackResolve(id, terms, w, 0, amount)},
	} {
		if err := f.trySendTo(step.key, to, step.data, nil); err != nil {
			f.t.Fatal(err)
		}
	}
}

// lock locks amount of the stake worker holds for agent: a bounty with that minimum stake,
// posted by dev key 3 (dev key 4 arbitrates) and claimed by the worker for agent.
func (f *fixture) lock(worker *ecdsa.PrivateKey, agent common.Hash, amount *big.Int) (*big.Int, contracts.IBountyEscrowTerms) {
	f.t.Helper()
	ctx := context.Background()
	escrowABI := contracts.NewBountyEscrow()
	poster, arbiter := chain.DevKey(3), chain.DevKey(4)
	head, err := f.c.HeaderByNumber(ctx, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	var salt common.Hash
	copy(salt[:], identity.NewNonce())
	terms := contracts.IBountyEscrowTerms{Poster: crypto.PubkeyToAddress(poster.PublicKey), Amount: big.NewInt(1),
		Arbiter: crypto.PubkeyToAddress(arbiter.PublicKey), Deadline: head.Time + 3600, ReviewWindow: 60, FeeBps: 0, MinStake: amount}
	id, err := bind.Call(escrowABI.Instance(f.c, f.dep.Contracts.BountyEscrow), nil, escrowABI.PackBountyId(terms.Poster, salt), escrowABI.UnpackBountyId)
	if err != nil {
		f.t.Fatal(err)
	}
	to := f.dep.Contracts.BountyEscrow
	if err := f.trySendTo(poster, to, escrowABI.PackPost(common.Address{}, big.NewInt(1), terms.Arbiter, terms.Deadline, terms.ReviewWindow, amount, common.Hash{}, salt), big.NewInt(1)); err != nil {
		f.t.Fatal(err)
	}
	if err := f.trySendTo(worker, to, escrowABI.PackClaim(id, terms, agent), nil); err != nil {
		f.t.Fatal(err)
	}
	return id, terms
}

// binding signs the binding of agent to wallet for the fixture's registry.
func (f *fixture) binding(agent *identity.Key, wallet *ecdsa.PrivateKey) []byte {
	f.t.Helper()
	b, err := identity.SignBinding(identity.BindingStatement{DID: agent.DID.String(), Wallet: crypto.PubkeyToAddress(wallet.PublicKey),
		ChainID: chain.EmbeddedChainID, Registry: f.dep.Contracts.StakeRegistry, IssuedAt: time.Now().Unix(), Nonce: identity.NewNonce()}, agent, wallet)
	if err != nil {
		f.t.Fatal(err)
	}
	raw, err := json.Marshal(b)
	if err != nil {
		f.t.Fatal(err)
	}
	return raw
}

func newAgent(t *testing.T, typ identity.KeyType) *identity.Key {
	t.Helper()
	k, err := identity.GenerateKey(typ)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

func sync1(t *testing.T, ix *stake.Index) {
	t.Helper()
	if _, err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCheckProof(t *testing.T) {
	f := newFixture(t)
	agent, other := newAgent(t, identity.Ed25519), newAgent(t, identity.Secp256k1)
	wallet, thief := chain.DevKey(1), chain.DevKey(2)
	good := f.binding(agent, wallet)
	reg := f.dep.Contracts.StakeRegistry
	id := identity.AgentID(agent.DID.String())
	var tampered map[string]any
	if err := json.Unmarshal(good, &tampered); err != nil {
		t.Fatal(err)
	}
	tampered["statement"].(map[string]any)["nonce"] = "changed"
	tamperedRaw, _ := json.Marshal(tampered)
	tests := []struct {
		name       string
		proof      []byte
		agent      common.Hash
		controller common.Address
		chainID    uint64
		registry   common.Address
		want       string // "" for a proof that verifies
	}{
		{"valid", good, id, addr(wallet), chain.EmbeddedChainID, reg, ""},
		{"valid secp256k1 agent", f.binding(other, wallet), identity.AgentID(other.DID.String()), addr(wallet), chain.EmbeddedChainID, reg, ""},
		{"empty", nil, id, addr(wallet), chain.EmbeddedChainID, reg, "empty"},
		{"not json", []byte{0}, id, addr(wallet), chain.EmbeddedChainID, reg, "not a binding"},
		{"oversized", make([]byte, stake.MaxProof+1), id, addr(wallet), chain.EmbeddedChainID, reg, "at most"},
		{"statement changed after signing", tamperedRaw, id, addr(wallet), chain.EmbeddedChainID, reg, "does not sign this statement"},
		{"another agent's binding", f.binding(other, wallet), id, addr(wallet), chain.EmbeddedChainID, reg, "whose id is not"},
		{"the victim's binding replayed from another wallet", good, id, addr(thief), chain.EmbeddedChainID, reg, "not the controller"},
		{"another chain", good, id, addr(wallet), 1, reg, "not chain 1"},
		{"another registry", good, id, addr(wallet), chain.EmbeddedChainID, common.HexToAddress("0x1"), "registry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := stake.CheckProof(tt.proof, tt.agent, tt.controller, tt.chainID, tt.registry)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckProof: %v", err)
				}
				if identity.AgentID(b.Statement.DID) != tt.agent {
					t.Errorf("binding names %s", b.Statement.DID)
				}
				return
			}
			if !errors.Is(err, stake.ErrProof) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckProof = %v, want ErrProof saying %q", err, tt.want)
			}
		})
	}
}

// TestForgedRecordsCountForNothing is the de-list attack: a thief binds the victim's agent id
// from its own wallet with an empty proof (or the victim's own binding, replayed), stakes
// and revokes. None of it may touch the victim's DID.
func TestForgedRecordsCountForNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ix := f.index(testutil.OpenSQL(t))
	victim := newAgent(t, identity.Ed25519)
	did, id := victim.DID.String(), identity.AgentID(victim.DID.String())
	wallet, thief, thief2 := chain.DevKey(1), chain.DevKey(2), chain.DevKey(3)
	proof := f.binding(victim, wallet)
	f.send(wallet, f.abi.PackBind(id, proof), nil)
	f.send(wallet, f.abi.PackStake(id, eth), eth)

	f.send(thief, f.abi.PackBind(id, nil), nil)
	f.send(thief, f.abi.PackStake(id, big.NewInt(5)), big.NewInt(5))
	f.send(thief, f.abi.PackRevoke(id), nil)
	f.send(thief2, f.abi.PackBind(id, proof), nil) // the victim's proof, from another wallet
	f.send(thief2, f.abi.PackRotate(id, identity.AgentID("did:key:zThief"), nil), nil)
	sync1(t, ix)

	st, err := ix.KeyState(ctx, did)
	if err != nil {
		t.Fatal(err)
	}
	if st.Closed() {
		t.Errorf("victim's key is %s after a forged revocation", st.Status)
	}
	wallets, err := ix.WalletsOf(ctx, did)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]common.Address{addr(wallet)}, wallets); diff != "" {
		t.Errorf("wallets of the victim (-want +got):\n%s", diff)
	}
	for _, w := range []*ecdsa.PrivateKey{thief, thief2} {
		if ok, err := ix.Bound(ctx, did, addr(w)); err != nil || ok {
			t.Errorf("Bound(victim, thief %s) = %v, %v; want false", addr(w), ok, err)
		}
		if s, err := ix.StakeOf(ctx, did, addr(w)); err != nil || s.Sign() != 0 {
			t.Errorf("StakeOf(victim, thief) = %v, %v; want 0", s, err)
		}
		if p, err := ix.BindingProof(ctx, did, addr(w)); err != nil || p != nil {
			t.Errorf("BindingProof(victim, thief) = %q, %v; want none", p, err)
		}
	}
	if s, err := ix.StakeOf(ctx, did, addr(wallet)); err != nil || s.Cmp(eth) != 0 {
		t.Errorf("StakeOf(victim, wallet) = %v, %v; want 1 ETH", s, err)
	}
	rec, err := ix.Record(ctx, did, addr(thief))
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Verified || rec.Status != stake.StatusRevoked || !strings.Contains(rec.ProofError, "empty") {
		t.Errorf("thief's record = %+v, want an unverified revoked record saying the proof is empty", rec)
	}
}

func TestRevocationAndRotation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ix := f.index(testutil.OpenSQL(t))
	var mu sync.Mutex
	var seen []string
	ix.Watch(func(_ context.Context, cs []stake.Change) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range cs {
			seen = append(seen, c.Event+" "+c.DID)
		}
	})
	wallet := chain.DevKey(1)
	old, next, bad := newAgent(t, identity.Ed25519), newAgent(t, identity.Secp256k1), newAgent(t, identity.Ed25519)
	oldID := identity.AgentID(old.DID.String())
	f.send(wallet, f.abi.PackBind(oldID, f.binding(old, wallet)), nil)
	f.send(wallet, f.abi.PackStake(oldID, eth), eth)
	f.send(wallet, f.abi.PackRotate(oldID, identity.AgentID(next.DID.String()), f.binding(next, wallet)), nil)
	sync1(t, ix)

	st, err := ix.KeyState(ctx, old.DID.String())
	if err != nil {
		t.Fatal(err)
	}
	want := stake.KeyState{DID: old.DID.String(), Status: stake.KeyRotated, Successor: next.DID.String(), Controller: addr(wallet), Block: st.Block}
	if diff := cmp.Diff(want, st); diff != "" || st.Block == 0 {
		t.Errorf("old key state (-want +got):\n%s", diff)
	}
	if s, _ := ix.StakeOf(ctx, next.DID.String(), addr(wallet)); s.Cmp(eth) != 0 {
		t.Errorf("the successor's stake is %s, want the 1 ETH that moved with it", s)
	}
	if ok, _ := ix.Bound(ctx, old.DID.String(), addr(wallet)); ok {
		t.Error("the rotated-away DID is still bound")
	}

	// A rotation whose new proof does not verify still retires the old key (its controller
	// asked) but names no successor, and the new record counts for nothing.
	nextID := identity.AgentID(next.DID.String())
	badID := identity.AgentID(bad.DID.String())
	f.send(wallet, f.abi.PackRotate(nextID, badID, []byte("{}")), nil)
	sync1(t, ix)
	st, _ = ix.KeyState(ctx, next.DID.String())
	if st.Status != stake.KeyRotated || st.Successor != "" {
		t.Errorf("after a rotation with a bad proof the key is %+v, want rotated with no successor", st)
	}
	if s, _ := ix.StakeOf(ctx, bad.DID.String(), addr(wallet)); s.Sign() != 0 {
		t.Errorf("an unproven successor counts stake %s", s)
	}

	// Revocation by a verified controller closes the DID for good, for every controller.
	third, wallet2 := newAgent(t, identity.Ed25519), chain.DevKey(2)
	thirdID := identity.AgentID(third.DID.String())
	f.send(wallet, f.abi.PackBind(thirdID, f.binding(third, wallet)), nil)
	f.send(wallet2, f.abi.PackBind(thirdID, f.binding(third, wallet2)), nil)
	f.send(wallet2, f.abi.PackStake(thirdID, eth), eth)
	f.send(wallet, f.abi.PackRevoke(thirdID), nil)
	sync1(t, ix)
	st, _ = ix.KeyState(ctx, third.DID.String())
	if st.Status != stake.KeyRevoked || st.Controller != addr(wallet) {
		t.Errorf("revoked DID's key is %+v", st)
	}
	if ws, _ := ix.WalletsOf(ctx, third.DID.String()); len(ws) != 0 {
		t.Errorf("a revoked DID still has wallets %v", ws)
	}
	if s, _ := ix.StakeOf(ctx, third.DID.String(), addr(wallet2)); s.Sign() != 0 {
		t.Errorf("a revoked DID's stake under its other controller still counts: %s", s)
	}
	// The other controller of the revoked DID rotates it to a key of its own: the successor
	// counts for nothing (at 5ab6450 it counted, and reputation follows a rotation, so a
	// revoked DID's standing went on under a key its second controller picked).
	heir := newAgent(t, identity.Ed25519)
	f.send(wallet2, f.abi.PackRotate(thirdID, identity.AgentID(heir.DID.String()), f.binding(heir, wallet2)), nil)
	sync1(t, ix)
	if ws, _ := ix.WalletsOf(ctx, heir.DID.String()); len(ws) != 0 {
		t.Errorf("a DID rotated to after another controller revoked it is bound to %v", ws)
	}
	if st, _ := ix.KeyState(ctx, third.DID.String()); st.Status != stake.KeyRevoked || st.Successor != "" {
		t.Errorf("the revoked DID's key after a later rotation is %+v, want revoked with no successor", st)
	}
	if staked, err := ix.StakedAgents(ctx); err != nil || len(staked) != 0 {
		t.Errorf("StakedAgents = %v, %v; want none: every staked DID was rotated away or revoked, the unproven successor counts nothing", staked, err)
	}
	if one, err := ix.Bonded(ctx, third.DID.String()); err != nil || one != 0 {
		t.Errorf("Bonded(revoked DID) = %v, %v; want 0", one, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, w := range []string{"Rotated " + old.DID.String(), "Bound " + next.DID.String(), "Revoked " + third.DID.String()} {
		if !contains(seen, w) {
			t.Errorf("watchers were not told %q; told %q", w, seen)
		}
	}
	for _, s := range seen {
		if strings.Contains(s, bad.DID.String()) {
			t.Errorf("watchers were told of an unverified record: %q", s)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestStakeAmountsFollowTheChain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	db := testutil.OpenSQL(t)
	ix := f.index(db)
	wallet := chain.DevKey(1)
	agent := newAgent(t, identity.Ed25519)
	did, id := agent.DID.String(), identity.AgentID(agent.DID.String())
	three := new(big.Int).Mul(eth, big.NewInt(3))
	f.send(wallet, f.abi.PackBind(id, f.binding(agent, wallet)), nil)
	f.send(wallet, f.abi.PackStake(id, three), three)
	f.send(wallet, f.abi.PackRequestUnbond(id, eth), nil)
	f.slash(wallet, id, big.NewInt(5e17))
	sync1(t, ix)
	rec, err := ix.Record(ctx, did, addr(wallet))
	if err != nil {
		t.Fatal(err)
	}
	onChain, err := bind.Call(f.abi.Instance(f.c, f.dep.Contracts.StakeRegistry), &bind.CallOpts{Context: ctx}, f.abi.PackRecordOf(id, addr(wallet)), f.abi.UnpackRecordOf)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Staked.Cmp(onChain.Staked) != 0 || rec.Unbonding.Cmp(onChain.Unbonding) != 0 || rec.Locked.Cmp(onChain.Locked) != 0 || rec.UnlockAt != onChain.UnlockAt {
		t.Errorf("index has staked %s unbonding %s locked %s unlock %d; chain has %s %s %s %d", rec.Staked, rec.Unbonding, rec.Locked, rec.UnlockAt,
			onChain.Staked, onChain.Unbonding, onChain.Locked, onChain.UnlockAt)
	}
	if s, _ := ix.StakeOf(ctx, did, addr(wallet)); s.Cmp(big.NewInt(15e17)) != 0 {
		t.Errorf("StakeOf = %s, want 1.5 ETH (3 staked, 1 unbonding, 0.5 slashed)", s)
	}
	if staked, err := ix.StakedAgents(ctx); err != nil || staked[did] != 1.5 || len(staked) != 1 {
		t.Errorf("StakedAgents = %v, %v; want %s: 1.5", staked, err, did)
	}
	if one, err := ix.Bonded(ctx, did); err != nil || one != 2.5 {
		t.Errorf("Bonded(%s) = %v, %v; want 2.5: StakedAgents' 1.5 and the 1 unbonding", did, one, err)
	}
	if err := f.c.AdvanceTime(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	f.send(wallet, f.abi.PackWithdraw(id), nil)
	sync1(t, ix)
	if rec, _ = ix.Record(ctx, did, addr(wallet)); rec.Unbonding.Sign() != 0 {
		t.Errorf("unbonding %s after withdraw, want 0", rec.Unbonding)
	}

	// A second index over the same database resumes without applying anything twice, and a
	// fresh database rebuilds the same records from the chain.
	again := f.index(db)
	sync1(t, again)
	fresh := f.index(testutil.OpenSQL(t))
	sync1(t, fresh)
	for _, other := range []*stake.Index{again, fresh} {
		got, err := other.Record(ctx, did, addr(wallet))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rec, got, cmp.Comparer(func(a, b *big.Int) bool { return a.Cmp(b) == 0 })); diff != "" {
			t.Errorf("record differs (-first +other):\n%s", diff)
		}
	}
}

func TestReorgForgetsARevocation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ix := f.index(testutil.OpenSQL(t))
	wallet := chain.DevKey(1)
	agent := newAgent(t, identity.Ed25519)
	did, id := agent.DID.String(), identity.AgentID(agent.DID.String())
	f.send(wallet, f.abi.PackBind(id, f.binding(agent, wallet)), nil)
	base, err := f.c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.send(wallet, f.abi.PackRevoke(id), nil)
	sync1(t, ix)
	if st, _ := ix.KeyState(ctx, did); st.Status != stake.KeyRevoked {
		t.Fatalf("before the reorg the key is %s, want revoked", st.Status)
	}
	if err := f.c.Fork(base.Hash()); err != nil {
		t.Fatal(err)
	}
	f.c.Mine()
	f.c.Mine() // the fork is longer than the branch it replaces
	sync1(t, ix)
	if st, _ := ix.KeyState(ctx, did); st.Status != stake.KeyActive {
		t.Errorf("after the revocation was reorganized away the key is %s, want active", st.Status)
	}
	if ok, _ := ix.Bound(ctx, did, addr(wallet)); !ok {
		t.Error("the binding before the fork point was lost in the reorg")
	}
}

// jobLock has worker join a Surety ERC-8183 job whose plan locks amount of agent's stake
// (client dev key 3, arbiter dev key 4, a DevToken budget), and returns the job's id and the
// lock id the hook used.
func (f *fixture) jobLock(worker *ecdsa.PrivateKey, agent common.Hash, amount *big.Int) (*big.Int, *big.Int) {
	f.t.Helper()
	ctx := context.Background()
	client, arbiter := chain.DevKey(3), chain.DevKey(4)
	tok, err := contracts.DeployDevToken(ctx, f.c, client, "Job", "JOB")
	if err != nil {
		f.t.Fatal(err)
	}
	jobs, hook, erc20 := contracts.NewJobEscrow(), contracts.NewSuretyHook(), contracts.NewDevToken()
	core, hookAt := f.dep.Contracts.JobEscrow, f.dep.Contracts.SuretyHook
	pool, err := bind.Call(hook.Instance(f.c, hookAt), nil, hook.PackPool(), hook.UnpackPool)
	if err != nil {
		f.t.Fatal(err)
	}
	head, err := f.c.HeaderByNumber(ctx, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	plan, err := contracts.EncodePlan(contracts.ISuretyHookPlan{Arbiter: addr(arbiter), ReviewWindow: 600, ArbiterTime: 600,
		MaxEntries: 1, MaxWinners: 1, MinStake: amount, PrevPart: new(big.Int)})
	if err != nil {
		f.t.Fatal(err)
	}
	id := big.NewInt(1)
	budget := big.NewInt(1000)
	for _, step := range []struct {
		key  *ecdsa.PrivateKey
		to   common.Address
		data []byte
	}{
		{client, tok, erc20.PackMint(addr(client), budget)},
		{client, tok, erc20.PackApprove(core, budget)},
		{client, core, jobs.PackCreateJob(pool, hookAt, new(big.Int).SetUint64(head.Time+3*86400), "job", hookAt, new(big.Int))},
		{client, core, jobs.PackSetBudget(id, tok, budget, plan)},
		{client, core, jobs.PackFund(id, budget, nil)},
		{worker, hookAt, hook.PackJoin(id, agent)},
	} {
		if err := f.trySendTo(step.key, step.to, step.data, nil); err != nil {
			f.t.Fatal(err)
		}
	}
	lockID, err := bind.Call(hook.Instance(f.c, hookAt), nil, hook.PackLockIdOf(id, addr(worker)), hook.UnpackLockIdOf)
	if err != nil {
		f.t.Fatal(err)
	}
	return id, lockID
}

// TestJobLocksAreIndexedBesideBountyLocks: a bounty lock and an ERC-8183 job lock (the hook's,
// its id with JOB_LOCK_BIT) on one agent sum in the record, the job's ruling slashes its own
// lock only, and the index agrees with the chain after each step.
func TestJobLocksAreIndexedBesideBountyLocks(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ix := f.index(testutil.OpenSQL(t))
	wallet := chain.DevKey(1)
	agent := newAgent(t, identity.Ed25519)
	did, id := agent.DID.String(), identity.AgentID(agent.DID.String())
	three := new(big.Int).Mul(eth, big.NewInt(3))
	f.send(wallet, f.abi.PackBind(id, f.binding(agent, wallet)), nil)
	f.send(wallet, f.abi.PackStake(id, three), three)
	bountyID, _ := f.lock(wallet, id, big.NewInt(5e17))
	jobID, lockID := f.jobLock(wallet, id, eth)
	if !stake.IsJobLock(lockID) || stake.IsJobLock(bountyID) {
		t.Fatalf("IsJobLock(job lock %s) and IsJobLock(bounty %s) are wrong", lockID, bountyID)
	}
	agree := func(want string) {
		t.Helper()
		sync1(t, ix)
		rec, err := ix.Record(ctx, did, addr(wallet))
		if err != nil {
			t.Fatal(err)
		}
		onChain, err := bind.Call(f.abi.Instance(f.c, f.dep.Contracts.StakeRegistry), &bind.CallOpts{Context: ctx}, f.abi.PackRecordOf(id, addr(wallet)), f.abi.UnpackRecordOf)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Staked.Cmp(onChain.Staked) != 0 || rec.Locked.Cmp(onChain.Locked) != 0 || rec.Locked.String() != want {
			t.Errorf("index: staked %s locked %s; chain: %s %s; want locked %s", rec.Staked, rec.Locked, onChain.Staked, onChain.Locked, want)
		}
	}
	agree("1500000000000000000") // the bounty's 0.5 and the job's 1
	hook := contracts.NewSuretyHook()
	client, arbiter := chain.DevKey(3), chain.DevKey(4)
	for _, step := range []struct {
		key  *ecdsa.PrivateKey
		data []byte
	}{
		{wallet, hook.PackSubmit(jobID, common.Hash{1})},
		{client, hook.PackReject(jobID, common.Hash{2})},
		{arbiter, hook.PackResolve(jobID, nil, nil, big.NewInt(25e16))},
	} {
		if err := f.trySendTo(step.key, f.dep.Contracts.SuretyHook, step.data, nil); err != nil {
			t.Fatal(err)
		}
	}
	agree("500000000000000000") // the job's lock ended; the bounty's holds
	if s, _ := ix.StakeOf(ctx, did, addr(wallet)); s.Cmp(big.NewInt(275e16)) != 0 {
		t.Errorf("StakeOf = %s, want 2.75 ETH (0.25 slashed by the job's ruling)", s)
	}
}
