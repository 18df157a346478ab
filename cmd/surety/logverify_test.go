package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/reputation/merkle"
	"github.com/surety-ioa/surety/reputation/verify"
)

// TestCheckNodeLog: `surety log verify` takes a node's head and checkpoint only when the
// node's DID signed both, the checkpoint names this chain, deployment and node, and it holds
// the head's size and root or a log consistent with it; a tampered head signature, a head or
// checkpoint of another node or deployment, and a checkpoint that contradicts the head are
// each refused with a one-line "NOT verified" error.
func TestCheckNodeLog(t *testing.T) {
	const anchor, otherAnchor = "0x5FbDB2315678afecb367f032d93F642f64180aa3", "0x00000000000000000000000000000000000000aa"
	node, other := newLogKey(t), newLogKey(t)
	did := node.DID.String()
	origin := verify.Origin(31337, anchor, did)
	var tree, forked merkle.Tree
	for i := range 12 {
		tree.Append(merkle.LeafHash(fmt.Appendf(nil, "audit-%d", i)))
		forked.Append(merkle.LeafHash(fmt.Appendf(nil, "forked-%d", i)))
	}
	root := func(tr *merkle.Tree, size uint64) merkle.Hash {
		r, err := tr.Root(size)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	head := func(k *identity.Key, size uint64, r merkle.Hash) wire.Head {
		payload, _ := json.Marshal(map[string]any{"size": size, "root": r, "epoch": 7, "closed": 1_800_000_000})
		jws, err := k.SignDocument(payload, verify.HeadType)
		if err != nil {
			t.Fatal(err)
		}
		return wire.Head{Size: size, Root: r, Epoch: 7, Closed: 1_800_000_000, Signed: jws}
	}
	checkpoint := func(k *identity.Key, origin string, size uint64, r merkle.Hash) []byte {
		n, err := verify.SignCheckpoint(verify.Checkpoint{Origin: origin, Size: size, Root: r}, k.DID.String(), k.SignNote)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	head10 := head(node, 10, root(&tree, 10))
	tamperedSig := head10
	parts := strings.Split(tamperedSig.Signed, ".")
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sig[len(sig)/2] ^= 1
	tamperedSig.Signed = parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
	unsignedSize := head10
	unsignedSize.Size = 11

	tests := []struct {
		name  string
		head  wire.Head
		note  []byte
		ok    bool
		want  error  // a verify error the refusal wraps, or nil
		lines string // the last line reported, or the refusal's text
	}{
		{"head and checkpoint agree", head10, checkpoint(node, origin, 10, root(&tree, 10)), true, nil, "the head's size and root"},
		{"the log grew in between", head10, checkpoint(node, origin, 12, root(&tree, 12)), true, nil, "consistent with the head (size 10 to 12)"},
		{"tampered head signature", tamperedSig, checkpoint(node, origin, 10, root(&tree, 10)), false, verify.ErrBadSignature, "NOT verified: the node's head"},
		{"head of another node", head(other, 10, root(&tree, 10)), checkpoint(node, origin, 10, root(&tree, 10)), false, verify.ErrWrongSigner, "NOT verified: the node's head"},
		{"head's unsigned fields differ", unsignedSize, checkpoint(node, origin, 10, root(&tree, 10)), false, nil, "says size 11"},
		{"checkpoint of another node", head10, checkpoint(other, verify.Origin(31337, anchor, other.DID.String()), 10, root(&tree, 10)), false, verify.ErrNoSignature, "NOT verified: the node's checkpoint"},
		{"checkpoint of another deployment", head10, checkpoint(node, verify.Origin(31337, otherAnchor, did), 10, root(&tree, 10)), false, verify.ErrNoSignature, "NOT verified: the node's checkpoint"},
		{"checkpoint of another chain", head10, checkpoint(node, verify.Origin(1, anchor, did), 10, root(&tree, 10)), false, verify.ErrNoSignature, "NOT verified: the node's checkpoint"},
		{"checkpoint with another root", head10, checkpoint(node, origin, 10, root(&forked, 10)), false, nil, "NOT verified: the node's checkpoint of size 10 has root"},
		{"checkpoint of a forked log", head10, checkpoint(node, origin, 12, root(&forked, 12)), false, verify.ErrProofInvalid, "NOT verified: the node's checkpoint of size 12 and its head of size 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			consistency := func(_ context.Context, from, to uint64) (wire.ConsistencyProof, error) {
				p, err := tree.ConsistencyProof(from, to)
				return wire.ConsistencyProof{From: from, To: to, Path: p}, err
			}
			var lines []string
			got, err := checkNodeLog(context.Background(), tt.head, tt.note, origin, did, consistency, func(l string) { lines = append(lines, l) })
			switch {
			case tt.ok:
				if err != nil || got.Size != 10 || got.Root != root(&tree, 10) || len(lines) != 2 ||
					!strings.HasPrefix(lines[0], "verified: head of size 10") || !strings.Contains(lines[1], tt.lines) {
					t.Errorf("checkNodeLog = %+v, %v; lines %q", got, err, lines)
				}
			case err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.lines) || strings.Contains(err.Error(), "\n"):
				t.Errorf("checkNodeLog = %v, want a one-line refusal with %q (%v)", err, tt.lines, tt.want)
			}
		})
	}
}

func newLogKey(t *testing.T) *identity.Key {
	t.Helper()
	k, err := identity.GenerateKey(identity.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestChainOfTheNode: log verify says it trusts the node when the chain can only answer as the
// node does (embedded in it, or read through its relay), and not for a chain of its own.
func TestChainOfTheNode(t *testing.T) {
	for _, tt := range []struct {
		kind, node, rpc string
		trustsNode      bool
	}{
		{"embedded", "http://127.0.0.1:7746", "http://127.0.0.1:7746/v1/rpc", true},
		{"embedded", "http://127.0.0.1:7746", "http://127.0.0.1:8545", true}, // no other copy of the chain exists
		{"rpc", "http://127.0.0.1:7746", "http://127.0.0.1:7746/v1/rpc", true},
		{"rpc", "http://Node.example:7746", "https://node.EXAMPLE:7746/v1/rpc", true},
		{"rpc", "http://127.0.0.1:7746", "http://127.0.0.1:8545", false},
		{"rpc", "http://node.example", "https://rpc.example/key", false},
	} {
		if got := chainOfTheNode(tt.kind, tt.node, tt.rpc) != ""; got != tt.trustsNode {
			t.Errorf("%s chain, node %s, --rpc-url %s: trusts the node %v, want %v", tt.kind, tt.node, tt.rpc, got, tt.trustsNode)
		}
	}
}
