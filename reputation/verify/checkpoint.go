package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Checkpoints (c2sp.org/tlog-checkpoint, signed as a c2sp.org/signed-note): the log's latest
// head as the transparency-log ecosystem writes it, so that its tools (Go's sumdb/note,
// rekor, trillian-tessera, witnesses) read a Surety node's log too:
//
//	surety.log/31337/0x5fbdb2315678afecb367f032d93f642f64180aa3/did:key:z6Mk…
//	42
//	qPqDH4ZNbDIe1E3I8/3tAMMkXK6E2L9f0rY+i3xNsRk=
//
//	— surety.log/31337/0x5fbdb2315678afecb367f032d93f642f64180aa3/did:key:z6Mk… AbCd…
//
// The origin (first line) names the chain, the deployment's RootAnchor (where the node anchors
// its heads) and the node's DID, so a checkpoint of one node or deployment cannot pass for
// another's. The key name is the origin, as tlog-checkpoint recommends, and the key the node's
// DID key. Ed25519 nodes sign with note signature type 0x01 (any signed-note verifier checks
// it); secp256k1 nodes with ES256KNoteType, an experimental type under signed-note's 0xff.

// OriginPrefix starts every Surety log origin.
const OriginPrefix = "surety.log/"

// Note signature types (c2sp.org/signed-note "Signature types"): the byte, or bytes, hashed
// into the key ID and put before the public key in a verifier key.
const (
	// Ed25519NoteType is signed-note's Ed25519: the signature is RFC 8032 over the note text.
	Ed25519NoteType = "\x01"
	// ES256KNoteType is Surety's secp256k1 type, experimental (signed-note assigns none: 0xff
	// then a name): the signature is R || S (64 bytes) over SHA-256 of the note text, and the
	// public key is 33 bytes, compressed.
	ES256KNoteType = "\xffsurety-es256k"
)

// Origin is the origin, and key name, of the checkpoints of node's log on chain chainID,
// anchored in the RootAnchor contract at anchor (0x-hex, any case).
func Origin(chainID uint64, anchor, node string) string {
	return OriginPrefix + strconv.FormatUint(chainID, 10) + "/" + strings.ToLower(anchor) + "/" + node
}

// Checkpoint is the note text of a checkpoint: the log's origin, size and root.
type Checkpoint struct {
	Origin string
	Size   uint64
	Root   Hash
	// Extensions are optional lines after the root; Surety's logs write none.
	Extensions []string
}

// Text is the checkpoint's note text, final newline included: what the signatures sign.
func (c Checkpoint) Text() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%d\n%s\n", c.Origin, c.Size, base64.StdEncoding.EncodeToString(c.Root[:]))
	for _, e := range c.Extensions {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseCheckpoint reads a checkpoint's note text (no signatures: OpenCheckpoint checks them).
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	bad := func(format string, args ...any) (Checkpoint, error) {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	if err := checkNoteBytes(text); err != nil {
		return Checkpoint{}, err
	}
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return bad("the text does not end in a newline")
	}
	lines := strings.Split(string(text[:len(text)-1]), "\n")
	if len(lines) < 3 {
		return bad("%d lines, want at least origin, size and root", len(lines))
	}
	c := Checkpoint{Origin: lines[0]}
	if c.Origin == "" {
		return bad("empty origin")
	}
	size := lines[1]
	if size == "" || strings.TrimLeft(size, "0123456789") != "" || (size[0] == '0' && size != "0") {
		return bad("size %q is not a decimal without leading zeroes", truncate(size, 30))
	}
	var err error
	if c.Size, err = strconv.ParseUint(size, 10, 64); err != nil {
		return bad("size %q: %v", truncate(size, 30), err)
	}
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != len(c.Root) {
		return bad("root %q is not 32 bytes of base64", truncate(lines[2], 60))
	}
	copy(c.Root[:], root)
	for _, e := range lines[3:] {
		if e == "" {
			return bad("an empty extension line")
		}
		c.Extensions = append(c.Extensions, e)
	}
	return c, nil
}

// checkNoteBytes refuses what signed-note forbids anywhere in a note: invalid UTF-8 and ASCII
// control characters other than newline.
func checkNoteBytes(b []byte) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("%w: checkpoint: not UTF-8", ErrMalformed)
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' {
			return fmt.Errorf("%w: checkpoint: control character 0x%02x", ErrMalformed, c)
		}
	}
	return nil
}

// validKeyName is signed-note's rule for key names: non-empty, no Unicode space, no '+'.
func validKeyName(name string) bool {
	return name != "" && utf8.ValidString(name) && !strings.ContainsFunc(name, func(r rune) bool {
		return unicode.IsSpace(r) || r == '+' || r < 0x20
	})
}

// noteType is the note signature type of the key.
func (k *nodeKey) noteType() string {
	if k.typ == ed25519Key {
		return Ed25519NoteType
	}
	return ES256KNoteType
}

// noteKeyID is signed-note's recommended key ID: SHA-256(name || 0x0A || type || public
// key)[:4], big-endian.
func (k *nodeKey) noteKeyID(name string) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n" + k.noteType()))
	h.Write(k.pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// NoteVerifierKey is the signed-note verifier key ("vkey") of node's key under name (a log's
// origin): name+hex(key ID)+base64(type || public key). For an Ed25519 node it is what
// golang.org/x/mod/sumdb/note.NewVerifier reads.
func NoteVerifierKey(name, node string) (string, error) {
	if !validKeyName(name) {
		return "", fmt.Errorf("%w: key name %q", ErrMalformed, truncate(name, 80))
	}
	k, err := parseKey(node)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s+%08x+%s", name, k.noteKeyID(name), base64.StdEncoding.EncodeToString(append([]byte(k.noteType()), k.pub...))), nil
}

// SignCheckpoint signs c as node, whose key signs with sign (the raw signature of the note
// text: Ed25519 over it, or ES256K over its SHA-256), and returns the signed note. The key
// name is c.Origin. The signature is checked before it is returned.
func SignCheckpoint(c Checkpoint, node string, sign func(text []byte) ([]byte, error)) ([]byte, error) {
	if !validKeyName(c.Origin) {
		return nil, fmt.Errorf("%w: origin %q is not a note key name", ErrMalformed, truncate(c.Origin, 80))
	}
	k, err := parseKey(node)
	if err != nil {
		return nil, err
	}
	text := c.Text()
	if _, err := ParseCheckpoint(text); err != nil {
		return nil, err
	}
	sig, err := sign(text)
	if err != nil {
		return nil, fmt.Errorf("sign checkpoint: %w", err)
	}
	if !k.verify(text, sig) {
		return nil, fmt.Errorf("%w: the signer's signature does not verify under %s", ErrBadSignature, node)
	}
	var id [4]byte
	binary.BigEndian.PutUint32(id[:], k.noteKeyID(c.Origin))
	out := append(text, '\n')
	out = fmt.Appendf(out, "— %s %s\n", c.Origin, base64.StdEncoding.EncodeToString(append(id[:], sig...)))
	return out, nil
}

// OpenCheckpoint verifies a signed checkpoint of node's log whose origin is origin (Origin
// makes it) and returns it. The note must carry a signature by node's key under the key name
// origin that verifies (ErrNoSignature, ErrBadSignature); signatures by other keys, such as
// witnesses' cosignatures, are ignored, as signed-note requires.
func OpenCheckpoint(note []byte, origin, node string) (Checkpoint, error) {
	if len(note) > MaxCheckpointSize {
		return Checkpoint{}, fmt.Errorf("%w: checkpoint larger than %d bytes", ErrMalformed, MaxCheckpointSize)
	}
	k, err := parseKey(node)
	if err != nil {
		return Checkpoint{}, err
	}
	text, sigs, err := splitNote(note)
	if err != nil {
		return Checkpoint{}, err
	}
	wantID := k.noteKeyID(origin)
	verified := false
	for _, s := range sigs {
		if s.name != origin || s.id != wantID {
			continue // another key's
		}
		if !k.verify(text, s.sig) {
			return Checkpoint{}, fmt.Errorf("%w: checkpoint signed as %s", ErrBadSignature, node)
		}
		verified = true
	}
	if !verified {
		return Checkpoint{}, fmt.Errorf("%w: none of %d signatures is %s's under %q", ErrNoSignature, len(sigs), node, truncate(origin, 200))
	}
	c, err := ParseCheckpoint(text)
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != origin {
		return Checkpoint{}, fmt.Errorf("%w: origin %q, want %q", ErrWrongOrigin, truncate(c.Origin, 200), origin)
	}
	return c, nil
}

// noteSig is one signature line of a note.
type noteSig struct {
	name string
	id   uint32
	sig  []byte
}

// splitNote splits a signed note into its text (final newline included) and signatures.
func splitNote(note []byte) (text []byte, sigs []noteSig, err error) {
	bad := func(format string, args ...any) ([]byte, []noteSig, error) {
		return nil, nil, fmt.Errorf("%w: signed note: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	if err := checkNoteBytes(note); err != nil {
		return nil, nil, err
	}
	i := bytes.LastIndex(note, []byte("\n\n"))
	if i < 0 {
		return bad("no blank line before the signatures")
	}
	text, block := note[:i+1], note[i+2:]
	if len(block) == 0 || block[len(block)-1] != '\n' {
		return bad("no signature lines, or the last does not end in a newline")
	}
	lines := strings.Split(string(block[:len(block)-1]), "\n")
	if len(lines) > MaxNoteSignatures {
		return bad("%d signatures, at most %d", len(lines), MaxNoteSignatures)
	}
	for _, line := range lines {
		rest, ok := strings.CutPrefix(line, "— ")
		if !ok {
			return bad("a signature line does not start with an em dash and a space")
		}
		name, b64, ok := strings.Cut(rest, " ")
		if !ok || !validKeyName(name) || strings.Contains(b64, " ") {
			return bad("a signature line is not \"— name signature\"")
		}
		raw, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || len(raw) < 5 {
			return bad("a signature is not base64 of a key ID and a signature")
		}
		sigs = append(sigs, noteSig{name: name, id: binary.BigEndian.Uint32(raw[:4]), sig: raw[4:]})
	}
	return text, sigs, nil
}
