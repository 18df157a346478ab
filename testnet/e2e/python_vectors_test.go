package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/rlp"

	"github.com/surety-ioa/surety/contracts"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation/merkle"
)

// updatePythonVectors rewrites clients/python/tests/vectors from the Go code instead of checking it.
var updatePythonVectors = flag.Bool("update-python-vectors", false, "rewrite clients/python/tests/vectors/*.json")

// pythonVectorDir is where the Python client's tests read what go-ethereum and Surety's Go
// code make from fixed inputs.
const pythonVectorDir = "../../clients/python/tests/vectors"

// pyVectorSeed is the i-th fixed 32-byte seed of the vectors: SHA-256 of "surety-python-vector-i".
func pyVectorSeed(i int) []byte {
	s := sha256.Sum256(fmt.Appendf(nil, "surety-python-vector-%d", i))
	return s[:]
}

// TestPythonClientVectors: the Python client (clients/python) writes keccak-256, RLP, the
// ABI, EIP-1559 signing, did:key, JWS and EIP-712 itself, so these vectors, made here by
// go-ethereum and Surety's Go code from fixed seeds, are what its tests hold it to. The
// files are committed; this test fails when they drift from what the Go code makes now
// (regenerate: go test ./testnet/e2e -run TestPythonClientVectors -update-python-vectors).
func TestPythonClientVectors(t *testing.T) {
	files := map[string]any{
		"keccak.json":   pyKeccakVectors(),
		"rlp.json":      pyRlpVectors(t),
		"keys.json":     pyKeyVectors(t),
		"jws.json":      pyJwsVectors(t),
		"bindings.json": pyBindingVectors(t),
		"txs.json":      pyTxVectors(t),
		"abi.json":      pyAbiVectors(),
		"merkle.json":   pyMerkleVectors(t),
	}
	for name, v := range files {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, '\n')
		path := filepath.Join(pythonVectorDir, name)
		if *updatePythonVectors {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (regenerate with -update-python-vectors)", err)
		}
		if !bytes.Equal(have, b) {
			t.Errorf("%s drifted from what the Go code makes now: regenerate with -update-python-vectors and check the Python tests", path)
		}
	}
}

func pyKeccakVectors() []map[string]string {
	var out []map[string]string
	for _, n := range []int{0, 1, 3, 32, 135, 136, 137, 271, 272, 1000} {
		in := bytes.Repeat(pyVectorSeed(n), n/32+1)[:n]
		if n == 3 {
			in = []byte("abc")
		}
		out = append(out, map[string]string{"input": hex.EncodeToString(in), "keccak256": hex.EncodeToString(crypto.Keccak256(in))})
	}
	return out
}

func pyRlpVectors(t *testing.T) []map[string]any {
	big1, _ := new(big.Int).SetString("115792089237316195423570985008687907853269984665640564039457584007913129639935", 10)
	cases := []struct {
		name string
		v    any
		py   any // the value as the Python test builds it: ints as decimal strings, bytes as hex
	}{
		{"empty string", []byte{}, map[string]any{"bytes": ""}},
		{"one low byte", []byte{0x7f}, map[string]any{"bytes": "7f"}},
		{"one high byte", []byte{0x80}, map[string]any{"bytes": "80"}},
		{"zero", uint64(0), map[string]any{"int": "0"}},
		{"1024", uint64(1024), map[string]any{"int": "1024"}},
		{"2^256-1", big1, map[string]any{"int": big1.String()}},
		{"56 bytes", bytes.Repeat([]byte{0xab}, 56), map[string]any{"bytes": hex.EncodeToString(bytes.Repeat([]byte{0xab}, 56))}},
		{"list", []any{[]byte("cat"), []byte("dog"), []any{}, uint64(1)}, map[string]any{"list": []any{
			map[string]any{"bytes": hex.EncodeToString([]byte("cat"))}, map[string]any{"bytes": hex.EncodeToString([]byte("dog"))},
			map[string]any{"list": []any{}}, map[string]any{"int": "1"}}}},
		{"long list", []any{bytes.Repeat([]byte{1}, 60)}, map[string]any{"list": []any{map[string]any{"bytes": hex.EncodeToString(bytes.Repeat([]byte{1}, 60))}}}},
	}
	var out []map[string]any
	for _, c := range cases {
		b, err := rlp.EncodeToBytes(c.v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, map[string]any{"name": c.name, "value": c.py, "rlp": hex.EncodeToString(b)})
	}
	return out
}

func pyKeyVectors(t *testing.T) []map[string]any {
	var out []map[string]any
	for i, kt := range []identity.KeyType{identity.Ed25519, identity.Secp256k1, identity.Ed25519, identity.Secp256k1} {
		k, err := identity.KeyFromSeed(kt, pyVectorSeed(i))
		if err != nil {
			t.Fatal(err)
		}
		file, err := k.MarshalKeyFile()
		if err != nil {
			t.Fatal(err)
		}
		jwk, err := k.DID.JWK()
		if err != nil {
			t.Fatal(err)
		}
		v := map[string]any{"type": string(kt), "seed": hex.EncodeToString(pyVectorSeed(i)), "did": k.DID.String(), "kid": k.DID.KeyID(),
			"jwk": jwk, "keyFile": string(file), "agentId": identity.AgentID(k.DID.String()).Hex()}
		if kt == identity.Secp256k1 {
			priv, _ := crypto.ToECDSA(pyVectorSeed(i))
			v["address"] = crypto.PubkeyToAddress(priv.PublicKey).Hex()
		}
		out = append(out, v)
	}
	return out
}

// pyJwsVectors are envelopes, cards and documents Go signs from fixed payloads: Ed25519 is
// deterministic, and go-ethereum's ES256K nonces are RFC 6979's, so the Python client must
// make the same bytes.
func pyJwsVectors(t *testing.T) []map[string]any {
	var out []map[string]any
	for i, kt := range []identity.KeyType{identity.Ed25519, identity.Secp256k1} {
		k, err := identity.KeyFromSeed(kt, pyVectorSeed(i))
		if err != nil {
			t.Fatal(err)
		}
		env := identity.Envelope{ID: "id-" + fmt.Sprint(i), Sender: k.DID.String(), Aud: "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
			ChainID: 31337, State: identity.StateExecution, Bounty: &identity.BountyRef{ChainID: 31337, Escrow: "0x5FbDB2315678afecb367f032d93F642f64180aa3", ID: 7},
			Body: json.RawMessage(`{"kind":"surety.audit/1","subject":"did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp","score":0.8,"evidence":{"hash":"0x` +
				hex.EncodeToString(pyVectorSeed(9)) + `","uri":"https://example.com/r?a=1&b=<2>"}}`),
			IssuedAt: 1764000000, Expires: 1764000300, Nonce: "nonce-" + fmt.Sprint(i)}
		payload, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		jws, err := k.SignCompact(payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, map[string]any{"kind": "envelope", "seed": hex.EncodeToString(pyVectorSeed(i)), "type": string(kt), "payload": string(payload), "jws": jws})

		card := registry.Card{DID: k.DID.String(), Name: "agent " + fmt.Sprint(i), Description: "translates <text> & more",
			Capabilities: []string{"translate", "summarize:en"}, Endpoints: []registry.Endpoint{{Kind: "a2a", URL: "https://agent.example/a2a"}},
			Wallet: common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"), Seq: 3, Updated: 1764000000}
		sc, err := registry.Sign(card, k)
		if err != nil {
			t.Fatal(err)
		}
		cardJSON, _ := json.Marshal(card)
		out = append(out, map[string]any{"kind": "card", "seed": hex.EncodeToString(pyVectorSeed(i)), "type": string(kt), "payload": string(cardJSON), "jws": sc.JWS})
	}
	return out
}

func pyBindingVectors(t *testing.T) []map[string]any {
	var out []map[string]any
	for i, kt := range []identity.KeyType{identity.Ed25519, identity.Secp256k1} {
		k, err := identity.KeyFromSeed(kt, pyVectorSeed(i))
		if err != nil {
			t.Fatal(err)
		}
		wallet, _ := crypto.ToECDSA(pyVectorSeed(10 + i))
		st := identity.BindingStatement{DID: k.DID.String(), Wallet: crypto.PubkeyToAddress(wallet.PublicKey), ChainID: 31337,
			Registry: common.HexToAddress("0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"), IssuedAt: 1764000000, Nonce: "nonce-" + fmt.Sprint(i)}
		b, err := identity.SignBinding(st, k, wallet)
		if err != nil {
			t.Fatal(err)
		}
		h, err := st.Hash()
		if err != nil {
			t.Fatal(err)
		}
		proof, _ := json.Marshal(b)
		out = append(out, map[string]any{"type": string(kt), "seed": hex.EncodeToString(pyVectorSeed(i)), "walletKey": hex.EncodeToString(pyVectorSeed(10 + i)),
			"statement": st, "digest": h.Hex(), "binding": string(proof),
			"bindCall": hex.EncodeToString(contracts.NewStakeRegistry().PackBind(identity.AgentID(st.DID), proof))})
	}
	return out
}

func pyTxVectors(t *testing.T) []map[string]any {
	var out []map[string]any
	to := common.HexToAddress("0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512")
	for i, c := range []struct {
		chainID, nonce, tip, cap, gas, value uint64
		data                                 []byte
	}{
		{31337, 0, 1e9, 3e9, 21000, 0, nil},
		{31337, 7, 1_500_000_000, 42_000_000_000, 250_000, 1e18, contracts.NewStakeRegistry().PackStake(identity.AgentID("did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"), big.NewInt(1e18))},
		{1, 255, 0, 1, 1 << 40, 1, bytes.Repeat([]byte{0xff}, 100)},
	} {
		key, _ := crypto.ToECDSA(pyVectorSeed(20 + i))
		tx := types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(c.chainID), Nonce: c.nonce, GasTipCap: new(big.Int).SetUint64(c.tip),
			GasFeeCap: new(big.Int).SetUint64(c.cap), Gas: c.gas, To: &to, Value: new(big.Int).SetUint64(c.value), Data: c.data})
		signed, err := types.SignTx(tx, types.NewLondonSigner(new(big.Int).SetUint64(c.chainID)), key)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := signed.MarshalBinary()
		out = append(out, map[string]any{"key": hex.EncodeToString(pyVectorSeed(20 + i)), "from": crypto.PubkeyToAddress(key.PublicKey).Hex(),
			"chainId": c.chainID, "nonce": c.nonce, "maxPriorityFeePerGas": fmt.Sprint(c.tip), "maxFeePerGas": fmt.Sprint(c.cap), "gas": c.gas,
			"to": to.Hex(), "value": fmt.Sprint(c.value), "data": hex.EncodeToString(c.data), "raw": hex.EncodeToString(raw), "hash": signed.Hash().Hex()})
	}
	return out
}

func pyAbiVectors() map[string]any {
	esc, reg := contracts.NewBountyEscrow(), contracts.NewStakeRegistry()
	poster, arbiter, worker := common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8"), common.HexToAddress("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"), common.HexToAddress("0x90F79bf6EB2c4f870365E785982E1f101E93b906")
	terms := contracts.IBountyEscrowTerms{Poster: poster, Amount: big.NewInt(1e16), Arbiter: arbiter, Deadline: 1764003600, ReviewWindow: 600, FeeBps: 100,
		MinStake: big.NewInt(1e15), SpecHash: [32]byte(crypto.Keccak256([]byte("translate this")))}
	agent := identity.AgentID("did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp")
	result := [32]byte(pyVectorSeed(30))
	salt := [32]byte(pyVectorSeed(31))
	id := big.NewInt(12345)
	h := func(b []byte) string { return hex.EncodeToString(b) }
	return map[string]any{
		"poster": poster.Hex(), "arbiter": arbiter.Hex(), "worker": worker.Hex(), "amount": "10000000000000000", "deadline": 1764003600,
		"reviewWindow": 600, "feeBps": 100, "minStake": "1000000000000000", "spec": "translate this", "agentId": agent.Hex(),
		"resultHash": h(result[:]), "salt": h(salt[:]), "id": 12345,
		"post":   h(esc.PackPost(common.Address{}, terms.Amount, arbiter, terms.Deadline, terms.ReviewWindow, terms.MinStake, terms.SpecHash, salt)),
		"claim":  h(esc.PackClaim(id, terms, agent)),
		"submit": h(esc.PackSubmit(id, terms, worker, result)),
		"accept": h(esc.PackAccept(id, terms, worker)),
		"stake":  h(reg.PackStake(agent, big.NewInt(2e18))),
	}
}

func pyMerkleVectors(t *testing.T) map[string]any {
	var tree merkle.Tree
	var leaves []string
	for i := range 13 {
		l := merkle.LeafHash(fmt.Appendf(nil, "audit-%d", i))
		tree.Append(l)
		leaves = append(leaves, l.String())
	}
	var proofs []map[string]any
	for _, size := range []uint64{1, 2, 3, 7, 8, 13} {
		root, err := tree.Root(size)
		if err != nil {
			t.Fatal(err)
		}
		for idx := range size {
			p, err := tree.InclusionProof(idx, size)
			if err != nil {
				t.Fatal(err)
			}
			path := make([]string, len(p))
			for i, h := range p {
				path[i] = h.String()
			}
			proofs = append(proofs, map[string]any{"index": idx, "size": size, "root": root.String(), "path": path})
		}
	}
	return map[string]any{"leafData": "audit-%d", "leaves": leaves, "proofs": proofs}
}
