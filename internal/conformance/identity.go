package conformance

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	ethcrypto "github.com/ethereum/go-ethereum/crypto"
	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/mr-tron/base58"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/registry"
)

// The kinds of package identity: keys, DIDs, envelopes and wallet bindings.
func init() {
	Register(Kind{Name: "key", Generate: genKeys, Check: checkKey})
	Register(Kind{Name: "did", Generate: genDIDs, Check: checkDID})
	Register(Kind{Name: "envelope", Generate: genEnvelopes, Check: checkEnvelope})
	Register(Kind{Name: "binding", Generate: genBindings, Check: checkBinding})
}

// ---- key: seed → DID, kid, JWK, public key ----

type keyInput struct {
	Type string `json:"type"`
	Seed string `json:"seed"` // 32 bytes, hex
}

func genKeys() ([]Named, error) {
	var out []Named
	add := func(name, desc string, t identity.KeyType, seed []byte) {
		out = append(out, Named{name, Vector{Kind: "key", Description: desc,
			Input: mustJSON(keyInput{Type: string(t), Seed: hex.EncodeToString(seed)}), Expect: keyFacts(t, seed)}})
	}
	add("ed25519-alice", "the Ed25519 fixture agent (alice) of the other vectors: seed → did:key, kid, JWK", identity.Ed25519, Seed("alice"))
	add("secp256k1-bob", "the secp256k1 fixture agent (bob) of the other vectors: seed (the private scalar) → did:key, kid, JWK, EVM address", identity.Secp256k1, Seed("bob"))
	add("ed25519-node", "the fixture node's Ed25519 key: the aud of the envelope vectors, the signer of the log heads and peer bindings", identity.Ed25519, Seed("node"))
	add("ed25519-other-node", "another node's Ed25519 key (the wrong audience, the wrong signer)", identity.Ed25519, Seed("other-node"))
	add("secp256k1-node", "a node whose key is secp256k1 (log heads signed with ES256K)", identity.Secp256k1, Seed("node-secp256k1"))
	rfc8032, _ := hex.DecodeString("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
	add("ed25519-rfc8032-test1", "RFC 8032 section 7.1 TEST 1's secret key as an agent key", identity.Ed25519, rfc8032)
	one := make([]byte, 32)
	one[31] = 1
	add("secp256k1-scalar-one", "secp256k1 private scalar 1: the public key is the generator point G", identity.Secp256k1, one)
	return out, nil
}

// keyFacts derives what the key vectors expect, with identity's own functions.
func keyFacts(t identity.KeyType, seed []byte) Expect {
	facts, err := deriveKey(t, seed)
	if err != nil {
		panic(err)
	}
	return Valid(facts)
}

func deriveKey(t identity.KeyType, seed []byte) (map[string]any, error) {
	k, err := identity.KeyFromSeed(t, seed)
	if err != nil {
		return nil, err
	}
	jwk, err := k.DID.JWK()
	if err != nil {
		return nil, err
	}
	facts := map[string]any{
		"did": k.DID.String(), "kid": k.DID.KeyID(), "publicKeyMultibase": k.DID.Fragment(), "jwk": jwk,
		"alg": string(k.Algorithm()), "publicKey": hex.EncodeToString(k.DID.PublicKey),
	}
	switch priv := k.Private.(type) {
	case ed25519.PrivateKey:
		_ = priv
	default:
		ek, err := ethcrypto.ToECDSA(seed)
		if err != nil {
			return nil, err
		}
		facts["address"] = ethcrypto.PubkeyToAddress(ek.PublicKey).Hex()
	}
	return facts, nil
}

func checkKey(v Vector) (Expect, error) {
	var in keyInput
	if err := json.Unmarshal(v.Input, &in); err != nil {
		return Expect{}, err
	}
	seed, err := hex.DecodeString(in.Seed)
	if err != nil {
		return Expect{}, err
	}
	facts, err := deriveKey(identity.KeyType(in.Type), seed)
	if err != nil {
		return Expect{Problem: api.ProblemType(err)}, nil
	}
	return Valid(facts), nil
}

// ---- did: parse a DID ----

func genDIDs() ([]Named, error) {
	var out []Named
	add := func(name, desc, did string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "did", Description: desc, Input: jsonString(did), Expect: want}})
	}
	keyDID := func(codec uint64, key []byte) string {
		buf := binary.AppendUvarint(nil, codec)
		return "did:key:z" + base58.Encode(append(buf, key...))
	}
	add("key-ed25519", "a did:key of an Ed25519 key (multicodec 0xed, base58btc)", alice.DID.String(),
		Valid(map[string]any{"method": "key", "keyType": "ed25519", "publicKey": hex.EncodeToString(alice.DID.PublicKey)}))
	add("key-secp256k1", "a did:key of a compressed secp256k1 key (multicodec 0xe7, base58btc)", bob.DID.String(),
		Valid(map[string]any{"method": "key", "keyType": "secp256k1", "publicKey": hex.EncodeToString(bob.DID.PublicKey)}))
	w := walletAddr(wallet)
	add("pkh-eip155", "a wallet's did:pkh (CAIP-10, EIP-55 checksummed address)", identity.PKHDID(ChainID, w).String(),
		Valid(map[string]any{"method": "pkh", "chainId": ChainID, "address": w.Hex()}))
	add("pkh-eip155-lowercase", "a did:pkh with an all-lowercase address: valid (CAIP-10 leaves case to the namespace)",
		fmt.Sprintf("did:pkh:eip155:%d:%s", ChainID, strings.ToLower(w.Hex())),
		Valid(map[string]any{"method": "pkh", "chainId": ChainID, "address": w.Hex()}))
	add("pkh-bad-checksum", "a did:pkh whose mixed-case address has a wrong EIP-55 checksum", fmt.Sprintf("did:pkh:eip155:%d:0x%s", ChainID, flipCase(w.Hex()[2:])), Refused("invalid-did"))
	add("pkh-other-namespace", "a did:pkh of a namespace other than eip155", "did:pkh:solana:4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZ:CKg5d12Jhpej1JqtmxLJgaFqqeYjxgPqToJ4LBdvG9Ev", Refused("unsupported-did-method"))
	add("pkh-chain-zero", "a did:pkh with chain id 0", "did:pkh:eip155:0:"+w.Hex(), Refused("invalid-did"))
	add("web-method", "did:web: a method Surety does not resolve", "did:web:example.com", Refused("unsupported-did-method"))
	add("key-p256", "a did:key of a P-256 key (multicodec 0x1200): well formed, a key type Surety does not support",
		keyDID(0x1200, append([]byte{0x02}, make([]byte, 32)...)), Refused("unsupported-key-type"))
	add("key-not-base58btc", "a did:key whose multibase prefix is not z (base58btc)", "did:key:f"+hex.EncodeToString(append([]byte{0xed, 0x01}, alice.DID.PublicKey...)), Refused("invalid-did"))
	add("key-truncated", "a did:key cut short: the Ed25519 key is 31 bytes", keyDID(0xed, alice.DID.PublicKey[:31]), Refused("invalid-did"))
	add("key-ed25519-off-curve", "a did:key whose 32 Ed25519 bytes are not a point on the curve", keyDID(0xed, offCurveEd25519()), Refused("invalid-did"))
	add("key-secp256k1-uncompressed", "a did:key carrying an uncompressed (65-byte) secp256k1 key: did:key uses the compressed form",
		keyDID(0xe7, ethcrypto.FromECDSAPub(&FixtureWallet("bob").PublicKey)), Refused("invalid-did"))
	add("key-with-fragment", "a DID URL (with #fragment) where a DID is expected", alice.DID.KeyID(), Refused("invalid-did"))
	add("not-a-did", "a string that is not a DID", "alice", Refused("invalid-did"))
	add("uppercase-method", "a method name in capitals", "did:KEY:"+alice.DID.Fragment(), Refused("invalid-did"))
	return out, nil
}

// offCurveEd25519 is the first 32-byte string (counting up in its first byte) that is not an
// Ed25519 point encoding.
func offCurveEd25519() []byte {
	for i := 2; i < 256; i++ {
		b := make([]byte, 32)
		b[0] = byte(i)
		if _, err := identity.KeyDID(identity.Ed25519, b); err != nil {
			return b
		}
	}
	panic("no off-curve point")
}

// flipCase swaps the case of the first letter in s (an EIP-55 address turns invalid).
func flipCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'f':
			b[i] = c - 32
			return string(b)
		case c >= 'A' && c <= 'F':
			b[i] = c + 32
			return string(b)
		}
	}
	panic("no letter")
}

func checkDID(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	d, err := identity.ParseDID(s)
	if err != nil {
		return Expect{Problem: api.ProblemType(err)}, nil
	}
	facts := map[string]any{"method": d.Method}
	if d.Method == "key" {
		facts["keyType"] = string(d.KeyType)
		facts["publicKey"] = hex.EncodeToString(d.PublicKey)
	} else {
		facts["chainId"] = d.ChainID
		facts["address"] = d.Address.Hex()
	}
	return Valid(facts), nil
}

// ---- envelope ----

// envelopeOf is a fixture envelope from k to the fixture node, its id and nonce both nonce.
func envelopeOf(k *identity.Key, nonce string) identity.Envelope {
	return identity.Envelope{ID: nonce, Sender: k.DID.String(), Aud: nodeKey.DID.String(), ChainID: ChainID,
		State: identity.StateDiscussion, Body: json.RawMessage(`{"text":"hello, node"}`), IssuedAt: Now - 10, Expires: Now + 290, Nonce: nonce}
}

func payloadOf(e identity.Envelope) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	return b
}

func signEnvelope(k *identity.Key, e identity.Envelope) string {
	s, err := k.SignCompact(payloadOf(e))
	if err != nil {
		panic(err)
	}
	return s
}

// envelopeContext is what a node tells its verifier: the time, its DID, its chain.
func envelopeContext() *Context {
	return &Context{Now: Now, Aud: nodeKey.DID.String(), ChainID: ChainID}
}

func genEnvelopes() ([]Named, error) {
	var out []Named
	add := func(name, desc string, input json.RawMessage, c *Context, want Expect) {
		if c == nil {
			c = envelopeContext()
		}
		out = append(out, Named{name, Vector{Kind: "envelope", Description: desc, Input: input, Context: c, Expect: want}})
	}
	validFacts := func(k *identity.Key, e identity.Envelope) Expect {
		return Valid(map[string]any{"sender": k.DID.String(), "id": e.ID, "signers": []string{k.DID.KeyID()}})
	}
	e := envelopeOf(alice, "env-valid-ed25519")
	add("valid-ed25519", "an Ed25519 envelope (EdDSA) addressed to the node, on its chain, in its window", jsonString(signEnvelope(alice, e)), nil, validFacts(alice, e))
	e = envelopeOf(bob, "env-valid-es256k")
	add("valid-es256k", "a secp256k1 envelope (ES256K: R || S, low S, over SHA-256)", jsonString(signEnvelope(bob, e)), nil, validFacts(bob, e))

	e = envelopeOf(alice, "env-valid-unknown-fields")
	var m map[string]any
	_ = json.Unmarshal(payloadOf(e), &m)
	m["x-extension"] = map[string]any{"kept": true}
	p, _ := json.Marshal(m)
	s, _ := alice.SignCompact(p)
	add("valid-unknown-field", "an envelope with a field this version does not know: kept and ignored", jsonString(s), nil, validFacts(alice, e))

	e = envelopeOf(alice, "env-valid-two-signers")
	js, err := identity.SignJSON(payloadOf(e), alice, bob)
	if err != nil {
		return nil, err
	}
	add("valid-json-two-signers", "the general JWS JSON serialization with two signatures, the sender's first", js, nil,
		Valid(map[string]any{"sender": alice.DID.String(), "id": e.ID, "signers": []string{alice.DID.KeyID(), bob.DID.KeyID()}}))

	e = envelopeOf(alice, "env-wrong-audience")
	e.Aud = otherNode.DID.String()
	add("wrong-audience", "an envelope whose aud names another node", jsonString(signEnvelope(alice, e)), nil, Refused("envelope-wrong-audience"))
	e = envelopeOf(alice, "env-no-audience")
	e.Aud = ""
	add("no-audience", "a state-changing envelope with no aud", jsonString(signEnvelope(alice, e)), nil, Refused("envelope-wrong-audience"))
	e = envelopeOf(alice, "env-wrong-chain")
	e.ChainID = 1
	add("wrong-chain", "an envelope whose chain_id names another chain", jsonString(signEnvelope(alice, e)), nil, Refused("envelope-wrong-chain"))
	e = envelopeOf(alice, "env-expired")
	e.IssuedAt, e.Expires = Now-400, Now-100
	add("expired", "an envelope whose exp passed more than the 30 s skew ago", jsonString(signEnvelope(alice, e)), nil, Refused("envelope-expired"))
	e = envelopeOf(alice, "env-expired-within-skew")
	e.IssuedAt, e.Expires = Now-300, Now-20
	add("expired-within-skew", "an envelope whose exp passed 20 s ago, within the 30 s skew: still valid", jsonString(signEnvelope(alice, e)), nil, validFacts(alice, e))
	e = envelopeOf(alice, "env-not-yet-valid")
	e.IssuedAt, e.Expires = Now+120, Now+300
	add("not-yet-valid", "an envelope issued 120 s in the future (beyond the 30 s skew)", jsonString(signEnvelope(alice, e)), nil, Refused("envelope-not-yet-valid"))
	e = envelopeOf(alice, "env-lifetime-too-long")
	e.IssuedAt, e.Expires = Now-10, Now-10+601
	add("lifetime-too-long", "an envelope whose exp - iat is 601 s (at most 600)", jsonString(signEnvelope(alice, e)), nil, Refused("envelope-lifetime"))
	e = envelopeOf(alice, "env-replayed")
	c := envelopeContext()
	c.Seen = []string{e.Nonce}
	add("replayed", "an envelope whose (sender, nonce) the node already accepted (context.seen)", jsonString(signEnvelope(alice, e)), c, Refused("envelope-replayed"))
	e = envelopeOf(alice, "env-revoked-signer")
	c = envelopeContext()
	c.Revoked = []string{alice.DID.String()}
	add("revoked-signer", "an envelope by a DID revoked on chain (context.revoked)", jsonString(signEnvelope(alice, e)), c, Refused("envelope-revoked"))
	e = envelopeOf(alice, "env-wrong-typ")
	s, _ = alice.SignDocument(payloadOf(e), registry.CardType)
	add("wrong-typ", "a valid signature over an envelope payload, but typ surety-card+jws: a card never passes for an envelope", jsonString(s), nil, Refused("envelope-malformed"))
	e = envelopeOf(alice, "env-tampered-payload")
	good := signEnvelope(alice, e)
	e.Body = json.RawMessage(`{"text":"hello, nodE"}`)
	add("tampered-payload", "a valid envelope whose payload had one character changed after signing", jsonString(replacePayload(good, payloadOf(e))), nil, Refused("envelope-bad-signature"))
	e = envelopeOf(alice, "env-bad-signature")
	add("bad-signature", "an Ed25519 envelope with one bit of its signature flipped", jsonString(flipSignature(signEnvelope(alice, e))), nil, Refused("envelope-bad-signature"))
	e = envelopeOf(bob, "env-bad-signature-es256k")
	add("bad-signature-es256k", "an ES256K envelope with one bit of its signature flipped", jsonString(flipSignature(signEnvelope(bob, e))), nil, Refused("envelope-bad-signature"))
	e = envelopeOf(alice, "env-kid-not-sender")
	add("kid-not-sender", "an envelope whose sender is alice, signed (validly) by bob's key", jsonString(signEnvelope(bob, e)), nil, Refused("envelope-kid-not-sender"))
	e = envelopeOf(alice, "env-unsupported-alg")
	add("unsupported-alg", "alg HS256: only EdDSA and ES256K are accepted", jsonString(signRaw(alice, jwa.EdDSA, header{"HS256", alice.DID.KeyID(), identity.EnvelopeType}, payloadOf(e))), nil, Refused("envelope-unsupported-alg"))
	e = envelopeOf(alice, "env-alg-does-not-fit-key")
	add("alg-does-not-fit-key", "alg ES256K on an Ed25519 kid", jsonString(signRaw(alice, jwa.EdDSA, header{"ES256K", alice.DID.KeyID(), identity.EnvelopeType}, payloadOf(e))), nil, Refused("envelope-unsupported-alg"))
	e = envelopeOf(alice, "env-missing-nonce")
	e.Nonce = ""
	add("missing-nonce", "an envelope with no nonce (id, sender, iat, exp and nonce are required)", jsonString(signEnvelope(alice, e)), nil, Refused("envelope-malformed"))
	e = envelopeOf(alice, "env-kid-wrong-fragment")
	add("kid-wrong-fragment", "a kid whose fragment is not the did:key's own key", jsonString(signRaw(alice, jwa.EdDSA, header{"EdDSA", alice.DID.String() + "#key-1", identity.EnvelopeType}, payloadOf(e))), nil, Refused("envelope-malformed"))
	return out, nil
}

// revokedKeys is the chain's word as a vector's context gives it.
type revokedKeys []string

func (r revokedKeys) KeyStatus(_ context.Context, did string) (identity.KeyStatus, error) {
	if slices.Contains(r, did) {
		return identity.KeyStatus{State: identity.KeyRevoked}, nil
	}
	return identity.KeyStatus{State: identity.KeyActive}, nil
}

// verifierFor is a fresh verifier told c: its clock, the chain's revocations; started long
// before c.Now, so no envelope is refused for predating it.
func verifierFor(c Context) *identity.Verifier {
	now := time.Unix(c.Now, 0)
	return identity.NewVerifier(identity.VerifierConfig{Now: func() time.Time { return now }, Started: time.Unix(1, 0), Keys: revokedKeys(c.Revoked)})
}

// verifyEnvelope verifies raw as a node does, told c: the envelope (Verify), then, when c
// names an audience, that it is addressed to it on c's chain. The nonces in c.Seen were
// used by the sender before: an envelope carrying one is first accepted once, as the node
// did when it first saw it.
func verifyEnvelope(raw []byte, c Context) (*identity.Verified, error) {
	v := verifierFor(c)
	if len(c.Seen) > 0 {
		first, err := v.Verify(context.Background(), raw)
		if err == nil && !slices.Contains(c.Seen, first.Envelope.Nonce) {
			v = verifierFor(c) // not a nonce seen before: start over
		}
	}
	got, err := v.Verify(context.Background(), raw)
	if err != nil {
		return nil, err
	}
	if c.Aud != "" {
		if err := got.Envelope.CheckAudience(c.Aud, c.ChainID); err != nil {
			return nil, err
		}
	}
	return got, nil
}

// envelopeBytes is a vector's envelope: a compact JWS (a JSON string) or a JSON JWS.
func envelopeBytes(v Vector) []byte {
	if s, err := inputString(v); err == nil {
		return []byte(s)
	}
	return v.Input
}

func checkEnvelope(v Vector) (Expect, error) {
	got, err := verifyEnvelope(envelopeBytes(v), ctx(v))
	if err != nil {
		return refusal(err)
	}
	return Valid(map[string]any{"sender": got.Envelope.Sender, "id": got.Envelope.ID, "signers": got.Signers}), nil
}

// refusal is the verdict for err: the API's problem type, or a checker failure if the API
// would answer it as an internal error.
func refusal(err error) (Expect, error) {
	p := api.ProblemType(err)
	if p == ProblemBase+"internal" {
		return Expect{}, fmt.Errorf("unmapped error: %w", err)
	}
	return Expect{Problem: p}, nil
}

// ---- binding ----

func statementOf(k *identity.Key, w common.Address) identity.BindingStatement {
	return identity.BindingStatement{DID: k.DID.String(), Wallet: w, ChainID: ChainID, Registry: common.HexToAddress(Registry), IssuedAt: Now, Nonce: "binding-" + k.DID.Fragment()[:12]}
}

func bindingContext() *Context {
	return &Context{ChainID: ChainID, Registry: common.HexToAddress(Registry).Hex()}
}

func genBindings() ([]Named, error) {
	var out []Named
	add := func(name, desc string, b any, c *Context, want Expect) {
		if c == nil {
			c = bindingContext()
		}
		out = append(out, Named{name, Vector{Kind: "binding", Description: desc, Input: mustJSON(b), Context: c, Expect: want}})
	}
	facts := func(s identity.BindingStatement) Expect {
		h, err := s.Hash()
		if err != nil {
			panic(err)
		}
		return Valid(map[string]any{"did": s.DID, "wallet": s.Wallet.Hex(), "agentId": identity.AgentID(s.DID).Hex(), "digest": h.Hex()})
	}
	sign := func(s identity.BindingStatement, k *identity.Key) *identity.Binding {
		b, err := identity.SignBinding(s, k, wallet)
		if err != nil {
			panic(err)
		}
		return b
	}
	w := walletAddr(wallet)
	s := statementOf(alice, w)
	add("valid-ed25519", "an Ed25519 agent bound to a wallet: the agent's JWS and the wallet's EIP-712 signature over one statement", sign(s, alice), nil, facts(s))
	s2 := statementOf(bob, w)
	add("valid-secp256k1", "a secp256k1 agent bound to a wallet", sign(s2, bob), nil, facts(s2))
	c := bindingContext()
	c.ChainID = 1
	add("wrong-chain", "a valid binding checked by a node on chain 1: it names chain 31337", sign(s, alice), c, Refused("wrong-registry"))
	c = bindingContext()
	c.Registry = common.HexToAddress("0x00000000000000000000000000000000000000aa").Hex()
	add("wrong-registry", "a valid binding checked by a node whose StakeRegistry is another contract", sign(s, alice), c, Refused("wrong-registry"))
	c = bindingContext()
	c.Revoked = []string{alice.DID.String()}
	add("revoked-agent", "a valid binding of a DID the chain revoked", sign(s, alice), c, Refused("envelope-revoked"))

	tampered := *sign(s, alice)
	tampered.Statement.Nonce = "binding-changed"
	add("tampered", "a binding whose statement (nonce) changed after both signed it", tampered, nil, Refused("bad-proof"))

	other := *sign(s, alice)
	h, err := s.Hash()
	if err != nil {
		return nil, err
	}
	sig, err := ethcrypto.Sign(h.Bytes(), thief)
	if err != nil {
		return nil, err
	}
	sig[64] += 27
	other.WalletSignature = sig
	add("other-wallet", "a binding whose EIP-712 signature is by another wallet than the statement's", other, nil, Refused("bad-proof"))

	wrongAgent := *sign(s, alice)
	payload, _ := json.Marshal(s)
	wrongAgent.AgentJWS, _ = bob.SignDocument(payload, identity.BindingType)
	add("agent-jws-by-another-did", "a binding whose agent JWS is by another DID than the statement's", wrongAgent, nil, Refused("bad-proof"))

	wrongTyp := *sign(s, alice)
	wrongTyp.AgentJWS, _ = alice.SignDocument(payload, identity.EnvelopeType)
	add("agent-jws-wrong-typ", "a binding whose agent JWS has typ surety-envelope+jws", wrongTyp, nil, Refused("bad-proof"))
	return out, nil
}

func checkBinding(v Vector) (Expect, error) {
	c := ctx(v)
	if !common.IsHexAddress(c.Registry) {
		return Expect{}, fmt.Errorf("context.registry %q is not an address", c.Registry)
	}
	b, err := identity.VerifyBinding(v.Input, c.ChainID, common.HexToAddress(c.Registry))
	if err == nil {
		err = verifierFor(c).CheckKeys(context.Background(), b.Statement.DID)
	}
	if err != nil {
		return refusal(err)
	}
	h, err := b.Statement.Hash()
	if err != nil {
		return Expect{}, err
	}
	return Valid(map[string]any{"did": b.Statement.DID, "wallet": b.Statement.Wallet.Hex(),
		"agentId": identity.AgentID(b.Statement.DID).Hex(), "digest": h.Hex()}), nil
}
