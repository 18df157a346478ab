package verify

import (
	"bytes"
	"fmt"

	"github.com/surety-ioa/surety/reputation/merkle"
)

// InclusionProof is a node's answer to GET /v1/log/proof/inclusion: leaf is entry Index of
// the tree of Size leaves, Path the RFC 6962 audit path.
type InclusionProof struct {
	Leaf  Hash   `json:"leaf"`
	Index uint64 `json:"index"`
	Size  uint64 `json:"size"`
	Path  []Hash `json:"path"`
}

// ConsistencyProof is a node's answer to GET /v1/log/proof/consistency: the tree of From
// leaves is a prefix of the tree of To leaves.
type ConsistencyProof struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
	Path []Hash `json:"path"`
}

// LeafHash is the RFC 6962 leaf hash of bytes: SHA-256(0x00 || leaf).
func LeafHash(leaf []byte) Hash { return merkle.LeafHash(leaf) }

// EnvelopeLeaf is the leaf of an audit in the log: the hash of its signed envelope as it was
// filed (a compact JWS or JWS JSON), less the white space around it (a file's last newline).
func EnvelopeLeaf(envelope []byte) Hash { return merkle.LeafHash(bytes.TrimSpace(envelope)) }

// Inclusion checks that leaf is in the tree of size leaves whose root is root, by p: p must
// be a proof for that leaf and that size (ErrProofMismatch) and lead to root
// (ErrProofInvalid, ErrProofShape). Size and root come from a head OpenHead verified, a
// checkpoint OpenCheckpoint verified, or the chain (RootAnchor.rootAt).
func Inclusion(leaf Hash, p InclusionProof, size uint64, root Hash) error {
	if p.Leaf != (Hash{}) && p.Leaf != leaf {
		return fmt.Errorf("%w: a proof of leaf %s, not %s", ErrProofMismatch, p.Leaf, leaf)
	}
	if p.Size != size {
		return fmt.Errorf("%w: a proof in the tree of size %d, not %d", ErrProofMismatch, p.Size, size)
	}
	if err := merkle.VerifyInclusion(leaf, p.Index, p.Size, p.Path, root); err != nil {
		return fmt.Errorf("leaf %s at %d of %d: %w", leaf, p.Index, p.Size, err)
	}
	return nil
}

// Consistency checks that the log of head older is a prefix of the log of head newer, by p
// (a proof from older.Size to newer.Size): the node never rewrote what it had signed.
func Consistency(older, newer Head, p ConsistencyProof) error {
	if p.From != older.Size || p.To != newer.Size {
		return fmt.Errorf("%w: a proof from %d to %d, not from %d to %d", ErrProofMismatch, p.From, p.To, older.Size, newer.Size)
	}
	if err := merkle.VerifyConsistency(older.Size, newer.Size, older.Root, newer.Root, p.Path); err != nil {
		return fmt.Errorf("from %d to %d: %w", older.Size, newer.Size, err)
	}
	return nil
}
