package conformance

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// The audit log as an auditor checks it: checkpoints (C2SP signed notes) and RFC 6962 proofs.
func init() {
	Register(Kind{Name: "checkpoint", Generate: genCheckpoints, Check: checkCheckpoint})
	Register(Kind{Name: "log-proof", Generate: genProofs, Check: checkProof})
}

// Anchor is the RootAnchor address the vectors' checkpoint origins name.
const Anchor = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"

// verifyReasons are the reason slugs of reputation/verify's errors, most specific first.
var verifyReasons = []struct {
	err    error
	reason string
}{
	{verify.ErrWrongType, "wrong-type"}, {verify.ErrWrongSigner, "wrong-signer"}, {verify.ErrBadSignature, "bad-signature"},
	{verify.ErrNoSignature, "no-signature"}, {verify.ErrWrongOrigin, "wrong-origin"}, {verify.ErrUnsupportedKey, "unsupported-key"},
	{verify.ErrProofMismatch, "proof-mismatch"}, {verify.ErrProofShape, "proof-shape"}, {verify.ErrProofInvalid, "proof-invalid"},
	{verify.ErrMalformed, "malformed"},
}

// verifyRefusal is the verdict for an error of reputation/verify.
func verifyRefusal(err error) (Expect, error) {
	for _, r := range verifyReasons {
		if errors.Is(err, r.err) {
			return RefusedFor(r.reason), nil
		}
	}
	return Expect{}, fmt.Errorf("unmapped error: %w", err)
}

// ---- checkpoint ----

// signNote signs text as k under key name (a C2SP signed note with one signature line).
func signNote(k *identity.Key, name string, text []byte) string {
	vkey, err := verify.NoteVerifierKey(name, k.DID.String())
	if err != nil {
		panic(err)
	}
	// vkey is name+<key ID hex>+<base64(type || key)>: the key ID is its second field (a key
	// name has no '+'; the base64 may).
	parts := strings.SplitN(vkey, "+", 3)
	id, err := hex.DecodeString(parts[1])
	if err != nil || len(id) != 4 {
		panic(fmt.Sprintf("verifier key %q: no key ID", vkey))
	}
	sig, err := k.SignNote(text)
	if err != nil {
		panic(err)
	}
	return string(text) + "\n— " + name + " " + b64std(append(id, sig...)) + "\n"
}

func genCheckpoints() ([]Named, error) {
	var out []Named
	origin := verify.Origin(ChainID, Anchor, nodeKey.DID.String())
	add := func(name, desc, note, node, origin string, want Expect) {
		out = append(out, Named{name, Vector{Kind: "checkpoint", Description: desc, Input: jsonString(note), Context: &Context{Node: node, Origin: origin}, Expect: want}})
	}
	h := fixtureHead()
	c := verify.Checkpoint{Origin: origin, Size: h.Size, Root: h.Root}
	good := signNote(nodeKey, origin, c.Text())
	facts := Valid(map[string]any{"origin": origin, "size": h.Size, "root": h.Root.String()})
	add("valid-ed25519", "the log-head vectors' head as a checkpoint signed by the node's Ed25519 key (signed-note type 0x01)", good, nodeKey.DID.String(), origin, facts)
	o2 := verify.Origin(ChainID, Anchor, node256k1.DID.String())
	c2 := verify.Checkpoint{Origin: o2, Size: h.Size, Root: h.Root}
	add("valid-es256k", "a checkpoint signed by a secp256k1 node (Surety's experimental type 0xff surety-es256k)", signNote(node256k1, o2, c2.Text()), node256k1.DID.String(), o2,
		Valid(map[string]any{"origin": o2, "size": h.Size, "root": h.Root.String()}))
	witness := signNote(otherNode, "witness.example/w1", c.Text())
	cosigned := good + witness[strings.Index(witness, "\n\n")+2:]
	add("cosigned", "a checkpoint with a witness's cosignature after the node's: other keys' lines are ignored", cosigned, nodeKey.DID.String(), origin, facts)
	lines := strings.Split(good, "\n")
	sigLine := lines[len(lines)-2]
	raw, _ := b64stdDecode(sigLine[strings.LastIndex(sigLine, " ")+1:])
	raw[len(raw)-1] ^= 0x01
	flipped := strings.Join(lines[:len(lines)-2], "\n") + "\n" + sigLine[:strings.LastIndex(sigLine, " ")+1] + b64std(raw) + "\n"
	add("bad-signature", "the node's signature line with one bit flipped", flipped, nodeKey.DID.String(), origin, RefusedFor("bad-signature"))
	t := c
	t.Size = h.Size + 1
	tampered := string(t.Text()) + good[len(c.Text()):]
	add("tampered-size", "the size changed under the node's signature", tampered, nodeKey.DID.String(), origin, RefusedFor("bad-signature"))
	add("other-node", "a valid checkpoint checked as another node's: no signature by that node's key", good, otherNode.DID.String(), verify.Origin(ChainID, Anchor, otherNode.DID.String()), RefusedFor("no-signature"))
	add("other-origin", "a valid checkpoint checked for the log of another chain: no signature under that origin", good, nodeKey.DID.String(), verify.Origin(1, Anchor, nodeKey.DID.String()), RefusedFor("no-signature"))
	wrong := verify.Checkpoint{Origin: verify.Origin(1, Anchor, nodeKey.DID.String()), Size: h.Size, Root: h.Root}
	add("wrong-origin", "a note whose text names another chain's log, signed by the node under this log's key name", signNote(nodeKey, origin, wrong.Text()), nodeKey.DID.String(), origin, RefusedFor("wrong-origin"))
	zero := origin + "\n04\n" + b64std(h.Root[:]) + "\n"
	add("size-leading-zero", "a size written with a leading zero (signed): not a checkpoint", signNote(nodeKey, origin, []byte(zero)), nodeKey.DID.String(), origin, RefusedFor("malformed"))
	add("no-blank-line", "a note without the blank line before its signatures", strings.Replace(good, "\n\n", "\n", 1), nodeKey.DID.String(), origin, RefusedFor("malformed"))
	return out, nil
}

func checkCheckpoint(v Vector) (Expect, error) {
	s, err := inputString(v)
	if err != nil {
		return Expect{}, err
	}
	c := ctx(v)
	cp, err := verify.OpenCheckpoint([]byte(s), c.Origin, c.Node)
	if err != nil {
		return verifyRefusal(err)
	}
	return Valid(map[string]any{"origin": cp.Origin, "size": cp.Size, "root": cp.Root.String()}), nil
}

// ---- log-proof: RFC 6962 inclusion and consistency proofs ----

// proofInput is a proof with what it is checked against: an inclusion proof (leaf, index,
// size, path as GET /v1/log/proof/inclusion answers) against root, or a consistency proof
// (from, to, path as /v1/log/proof/consistency answers) between fromRoot and toRoot.
type proofInput struct {
	Type     string        `json:"type"` // "inclusion" or "consistency"
	Leaf     *merkle.Hash  `json:"leaf,omitempty"`
	Index    uint64        `json:"index,omitempty"`
	Size     uint64        `json:"size,omitempty"`
	From     uint64        `json:"from,omitempty"`
	To       uint64        `json:"to,omitempty"`
	Path     []merkle.Hash `json:"path"`
	Root     *merkle.Hash  `json:"root,omitempty"`
	FromRoot *merkle.Hash  `json:"fromRoot,omitempty"`
	ToRoot   *merkle.Hash  `json:"toRoot,omitempty"`
}

func genProofs() ([]Named, error) {
	var out []Named
	add := func(name, desc string, in proofInput, want Expect) {
		if in.Path == nil {
			in.Path = []merkle.Hash{}
		}
		out = append(out, Named{name, Vector{Kind: "log-proof", Description: desc, Input: mustJSON(in), Expect: want}})
	}
	var t merkle.Tree
	var leaves []merkle.Hash
	for i := range 7 {
		l := merkle.LeafHash([]byte(fmt.Sprintf("leaf-%d", i)))
		leaves = append(leaves, l)
		t.Append(l)
	}
	root := func(n uint64) *merkle.Hash { r, _ := t.Root(n); return &r }
	incl := func(i, n uint64) proofInput {
		p, err := t.InclusionProof(i, n)
		if err != nil {
			panic(err)
		}
		l := leaves[i]
		return proofInput{Type: "inclusion", Leaf: &l, Index: i, Size: n, Path: p, Root: root(n)}
	}
	cons := func(m, n uint64) proofInput {
		p, err := t.ConsistencyProof(m, n)
		if err != nil {
			panic(err)
		}
		return proofInput{Type: "consistency", From: m, To: n, Path: p, FromRoot: root(m), ToRoot: root(n)}
	}
	ok := Valid(map[string]any{})
	add("inclusion-first", "leaf 0 of 7 (leaves are LeafHash(\"leaf-i\"))", incl(0, 7), ok)
	add("inclusion-middle", "leaf 3 of 7", incl(3, 7), ok)
	add("inclusion-last", "leaf 6 of 7: the right edge of an unbalanced tree", incl(6, 7), ok)
	add("inclusion-single", "the only leaf of a tree of 1: an empty path", incl(0, 1), ok)
	bad := incl(3, 7)
	other := *root(6)
	bad.Root = &other
	add("inclusion-wrong-root", "a good path checked against another tree's root", bad, RefusedFor("proof-invalid"))
	bad = incl(3, 7)
	bad.Index = 2
	add("inclusion-wrong-index", "leaf 3's path presented for index 2", bad, RefusedFor("proof-invalid"))
	bad = incl(3, 7)
	bad.Path = bad.Path[:len(bad.Path)-1]
	add("inclusion-short-path", "a path missing its last hash", bad, RefusedFor("proof-shape"))
	bad = incl(3, 7)
	bad.Index = 7
	add("inclusion-index-out-of-tree", "index 7 in a tree of 7", bad, RefusedFor("proof-shape"))
	add("consistency-3-7", "the tree of 3 is a prefix of the tree of 7", cons(3, 7), ok)
	add("consistency-4-7", "from a power of two: the old root is left out of the path", cons(4, 7), ok)
	add("consistency-same", "from 7 to 7: an empty path, equal roots", cons(7, 7), ok)
	bc := cons(3, 7)
	r5 := *root(5)
	bc.FromRoot = &r5
	add("consistency-rewritten", "a proof from 3 to 7 checked against a root of another size-3 history", bc, RefusedFor("proof-invalid"))
	bc = cons(3, 7)
	bc.From, bc.To = 7, 3
	add("consistency-shrinks", "from 7 to the smaller 3", bc, RefusedFor("proof-shape"))
	return out, nil
}

func checkProof(v Vector) (Expect, error) {
	var in proofInput
	if err := json.Unmarshal(v.Input, &in); err != nil {
		return Expect{}, err
	}
	var err error
	switch in.Type {
	case "inclusion":
		if in.Leaf == nil || in.Root == nil {
			return Expect{}, errors.New("inclusion input needs leaf and root")
		}
		err = verify.Inclusion(*in.Leaf, verify.InclusionProof{Leaf: *in.Leaf, Index: in.Index, Size: in.Size, Path: in.Path}, in.Size, *in.Root)
	case "consistency":
		if in.FromRoot == nil || in.ToRoot == nil {
			return Expect{}, errors.New("consistency input needs fromRoot and toRoot")
		}
		err = verify.Consistency(verify.Head{Size: in.From, Root: *in.FromRoot}, verify.Head{Size: in.To, Root: *in.ToRoot},
			verify.ConsistencyProof{From: in.From, To: in.To, Path: in.Path})
	default:
		return Expect{}, fmt.Errorf("proof type %q", in.Type)
	}
	if err != nil {
		return verifyRefusal(err)
	}
	return Valid(map[string]any{}), nil
}
