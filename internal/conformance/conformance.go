package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// Vector is one conformance vector: a file testdata/conformance/<Kind>/<name>.json.
type Vector struct {
	// Kind names the checker: key, did, envelope, audit, binding, card, log-head,
	// peer-binding, and what other files register.
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Input is the object as it travels: a JSON string (a compact JWS, a DID) or JSON.
	Input json.RawMessage `json:"input"`
	// Context is what the verifier is told besides the input.
	Context *Context `json:"context,omitempty"`
	Expect  Expect   `json:"expect"`
}

// Context is what a verifier is told besides the input; every field is optional. Fields a
// kind of its own needs go in Extra (kept as they are, written in key order with the rest).
type Context struct {
	// Now is the time the verifier takes as now, in unix seconds.
	Now int64 `json:"now,omitempty"`
	// Aud is the receiving node's DID: a state-changing envelope must name it in aud.
	Aud string `json:"aud,omitempty"`
	// ChainID is the verifier's chain: an envelope's chain_id, a binding's chainId.
	ChainID uint64 `json:"chain_id,omitempty"`
	// Registry is the StakeRegistry address a binding must name.
	Registry string `json:"registry,omitempty"`
	// Revoked are DIDs the chain revoked: what they sign is refused.
	Revoked []string `json:"revoked,omitempty"`
	// Seen are nonces the input's sender already used in envelopes the verifier accepted
	// (in these vectors an envelope's id is its nonce): a replay.
	Seen []string `json:"seen,omitempty"`
	// Node is the DID the verifier trusts as the signer (a log head, a peer binding).
	Node string `json:"node,omitempty"`
	// Peer is the libp2p peer id a peer binding must name.
	Peer string `json:"peer,omitempty"`
	// Origin is the origin a checkpoint must carry (its log's: chain, anchor, node).
	Origin string `json:"origin,omitempty"`
	// Bound are DIDs a wallet binds on chain (a group's creator must be one).
	Bound []string `json:"bound,omitempty"`
	// Accepted are envelopes the verifier took before the input, in order (a group's
	// membership before a post to it), each a compact JWS.
	Accepted []string `json:"accepted,omitempty"`
	// Extra holds the fields other kinds add.
	Extra map[string]json.RawMessage `json:"-"`
}

type contextFields Context

// MarshalJSON writes the fields and Extra as one object, keys sorted.
func (c Context) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(contextFields(c))
	if err != nil {
		return nil, err
	}
	if len(c.Extra) == 0 {
		return b, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range c.Extra {
		if _, ok := m[k]; ok {
			return nil, fmt.Errorf("context: extra field %q is a named field", k)
		}
		m[k] = v
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the named fields and keeps the others in Extra.
func (c *Context) UnmarshalJSON(b []byte) error {
	var f contextFields
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, k := range []string{"now", "aud", "chain_id", "registry", "revoked", "seen", "node", "peer", "origin", "bound", "accepted"} {
		delete(m, k)
	}
	*c = Context(f)
	if len(m) > 0 {
		c.Extra = m
	}
	return nil
}

// Expect is a vector's verdict: valid with the facts a verifier derives, or refused. A
// refusal names Problem, the problem type a node's API answers (api/errors.go), when a node
// refuses such objects; objects only clients check (log heads, peer bindings) name a Reason
// slug instead.
type Expect struct {
	Valid   bool
	Problem string
	Reason  string
	// Facts are what a verifier of a valid input derives (the signer's DID, ...).
	Facts map[string]any
}

// MarshalJSON writes {"valid": …, "problem"|"reason": …, facts…}.
func (e Expect) MarshalJSON() ([]byte, error) {
	m := map[string]any{"valid": e.Valid}
	for k, v := range e.Facts {
		m[k] = v
	}
	if e.Problem != "" {
		m["problem"] = e.Problem
	}
	if e.Reason != "" {
		m["reason"] = e.Reason
	}
	return marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Expect) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	valid, ok := m["valid"].(bool)
	if !ok {
		return fmt.Errorf("expect: valid must be true or false")
	}
	*e = Expect{Valid: valid}
	e.Problem, _ = m["problem"].(string)
	e.Reason, _ = m["reason"].(string)
	delete(m, "valid")
	delete(m, "problem")
	delete(m, "reason")
	if len(m) > 0 {
		e.Facts = m
	}
	return nil
}

// Valid is a valid verdict with facts.
func Valid(facts map[string]any) Expect { return Expect{Valid: true, Facts: facts} }

// Refused is a refusal with the problem type of the given slug (api/errors.go's slugs).
func Refused(slug string) Expect { return Expect{Problem: ProblemBase + slug} }

// RefusedFor is a refusal of an object only clients check, with a reason slug.
func RefusedFor(reason string) Expect { return Expect{Reason: reason} }

// ProblemBase is the base of the API's problem types.
const ProblemBase = "https://surety.dev/problems/"

// Named is a generated vector and its file name (without .json).
type Named struct {
	Name   string
	Vector Vector
}

// Kind is one kind of vector: how to make its vectors and how to check one.
type Kind struct {
	Name string
	// Generate makes the kind's vectors, deterministically.
	Generate func() ([]Named, error)
	// Check verifies v's input with the Go code, told v's context, and returns the verdict
	// reached (Facts holding at least those the kind's vectors expect). An error is a
	// failure of the checker itself, not a refusal.
	Check func(v Vector) (Expect, error)
}

var kinds = map[string]Kind{}

// Register adds a kind; each file that defines a kind calls it from init.
func Register(k Kind) {
	if _, dup := kinds[k.Name]; dup {
		panic("conformance: kind " + k.Name + " registered twice")
	}
	kinds[k.Name] = k
}

// Kinds lists the registered kinds' names, sorted.
func Kinds() []string {
	out := make([]string, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the registered kind called name.
func Lookup(name string) (Kind, bool) {
	k, ok := kinds[name]
	return k, ok
}

var fileName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Generate makes every registered kind's vectors, as files: path (kind/name.json, slash
// separated) → bytes.
func Generate() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range Kinds() {
		vs, err := kinds[name].Generate()
		if err != nil {
			return nil, fmt.Errorf("generate %s: %w", name, err)
		}
		for _, nv := range vs {
			if !fileName.MatchString(nv.Name) {
				return nil, fmt.Errorf("generate %s: vector name %q: use a-z 0-9 -", name, nv.Name)
			}
			if nv.Vector.Kind != name {
				return nil, fmt.Errorf("generate %s: vector %s has kind %q", name, nv.Name, nv.Vector.Kind)
			}
			path := name + "/" + nv.Name + ".json"
			if _, dup := out[path]; dup {
				return nil, fmt.Errorf("generate %s: two vectors named %s", name, nv.Name)
			}
			b, err := Encode(nv.Vector)
			if err != nil {
				return nil, fmt.Errorf("generate %s: %s: %w", name, nv.Name, err)
			}
			out[path] = b
		}
	}
	return out, nil
}

// Encode is a vector's file: indented JSON, keys of free-form objects sorted, a final newline.
func Encode(v Vector) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping (the files are read by people too).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Load reads every vector under dir (dir/<kind>/<name>.json), keyed by its slash path.
func Load(dir string) (map[string]Vector, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]Vector{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var v Vector
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		out[filepath.ToSlash(rel)] = v
	}
	return out, nil
}

// Run checks v with its kind's checker and compares the verdict with v.Expect: the same
// validity, the same problem or reason, and every expected fact equal (as JSON) to the one
// the checker derived. It returns what differs, or nil.
func Run(v Vector) error {
	k, ok := kinds[v.Kind]
	if !ok {
		return fmt.Errorf("no checker for kind %q", v.Kind)
	}
	got, err := k.Check(v)
	if err != nil {
		return fmt.Errorf("checker: %w", err)
	}
	switch {
	case got.Valid != v.Expect.Valid:
		return fmt.Errorf("valid = %v (problem %q, reason %q), want %v (problem %q, reason %q)",
			got.Valid, got.Problem, got.Reason, v.Expect.Valid, v.Expect.Problem, v.Expect.Reason)
	case got.Problem != v.Expect.Problem:
		return fmt.Errorf("problem = %q, want %q", got.Problem, v.Expect.Problem)
	case got.Reason != v.Expect.Reason:
		return fmt.Errorf("reason = %q, want %q", got.Reason, v.Expect.Reason)
	}
	for name, want := range v.Expect.Facts {
		g, ok := got.Facts[name]
		if !ok {
			return fmt.Errorf("fact %s: the checker derived none", name)
		}
		gb, err := json.Marshal(g)
		if err != nil {
			return err
		}
		wb, err := json.Marshal(want)
		if err != nil {
			return err
		}
		var gn, wn any
		_ = json.Unmarshal(gb, &gn)
		_ = json.Unmarshal(wb, &wn)
		gb, _ = json.Marshal(gn)
		wb, _ = json.Marshal(wn)
		if !bytes.Equal(gb, wb) {
			return fmt.Errorf("fact %s = %s, want %s", name, gb, wb)
		}
	}
	return nil
}
