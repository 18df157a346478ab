package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surety-ioa/surety/api"
	"github.com/surety-ioa/surety/api/client"
	"github.com/surety-ioa/surety/api/wire"
	"github.com/surety-ioa/surety/erc8004"
	"github.com/surety-ioa/surety/escrow"
	"github.com/surety-ioa/surety/groups"
	"github.com/surety-ioa/surety/identity"
	"github.com/surety-ioa/surety/jobs"
	"github.com/surety-ioa/surety/registry"
	"github.com/surety-ioa/surety/reputation"
	"github.com/surety-ioa/surety/stake"
)

// TestWireMirrorsDomainTypes: each api/wire type that stands for a node package's type in the
// API has its JSON exactly: every field of the one decodes into the other (none unknown) and
// comes back the same, both ways, for the zero value and for a value with every field set.
// A field added to registry.Agent (say) and not to wire.Agent fails here.
func TestWireMirrorsDomainTypes(t *testing.T) {
	challenge := struct {
		identity.Challenge
		Audience string `json:"audience"`
	}{} // what GET /v1/challenge answers
	for _, tt := range []struct {
		name         string
		domain, wire any
	}{
		{"identity.Issued", &identity.Issued{}, &wire.Issued{}},
		{"identity.Binding", &identity.Binding{}, &wire.BindingRequest{}},
		{"identity.BindingStatement", &identity.BindingStatement{}, &wire.BindingStatement{}},
		{"challenge", &challenge, &wire.Challenge{}},
		{"api.AgentAnswer", &api.AgentAnswer{}, &wire.Agent{}},
		{"registry.StatusResult", &registry.StatusResult{}, &wire.StatusResult{}},
		{"reputation.Submitted", &reputation.Submitted{}, &wire.Submitted{}},
		{"reputation.Reputation", &reputation.Reputation{}, &wire.Reputation{}},
		{"reputation.Head", &reputation.Head{}, &wire.Head{}},
		{"reputation.LogSync", &reputation.LogSync{}, &wire.LogSync{}},
		{"reputation.LeafPage", &reputation.LeafPage{}, &wire.LeafPage{}},
		{"reputation.ScoredHead", &reputation.ScoredHead{}, &wire.ScoredHead{}},
		{"reputation.ScorePoint", &reputation.ScorePoint{}, &wire.ScorePoint{}},
		{"groups.Group", &groups.Group{}, &wire.Group{}},
		{"groups.Posted", &groups.Posted{}, &wire.Posted{}},
		{"groups.Envelope", &groups.Envelope{}, &wire.GroupEnvelope{}},
		{"escrow.Bounty", &escrow.Bounty{}, &wire.Bounty{}},
		{"escrow.Result", &escrow.Result{}, &wire.BountyResult{}},
		{"jobs.Job", &jobs.Job{}, &wire.Job{}},
		{"api.JobList", &api.JobList{}, &wire.JobList{}},
		{"stake.Result", &stake.Result{}, &wire.StakeResult{}},
		{"stake.Holding", &stake.Holding{}, &wire.Holding{}},
		{"stake.KeyState", &stake.KeyState{}, &wire.KeyState{}},
		{"api.KeyChange", &api.KeyChange{}, &wire.KeyChange{}},
		{"erc8004.Agent", &erc8004.Agent{}, &wire.ERC8004Agent{}},
		{"erc8004.Feedback", &erc8004.Feedback{}, &wire.ERC8004Feedback{}},
		{"api.ERC8004DID", &api.ERC8004DID{}, &wire.ERC8004DID{}},
		{"api.ERC8004Feedback", &api.ERC8004Feedback{}, &wire.ERC8004FeedbackList{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, d := range mirrorDiffs(tt.domain, tt.wire) {
				t.Error(d)
			}
		})
	}
}

// TestMirrorDiffsCatch proves the mirror check can fail: a field missing on either side, a
// renamed key, an omitempty on one side only, another JSON type.
func TestMirrorDiffsCatch(t *testing.T) {
	type base struct {
		A string `json:"a"`
		B int    `json:"b,omitempty"`
	}
	for _, tt := range []struct {
		name  string
		other any
		want  bool
	}{
		{"the same", &struct {
			A string `json:"a"`
			B int    `json:"b,omitempty"`
		}{}, false},
		{"a field missing", &struct {
			A string `json:"a"`
		}{}, true},
		{"a field more", &struct {
			A string `json:"a"`
			B int    `json:"b,omitempty"`
			C bool   `json:"c,omitempty"`
		}{}, true},
		{"renamed", &struct {
			A string `json:"a"`
			B int    `json:"bee,omitempty"`
		}{}, true},
		{"omitempty on one side", &struct {
			A string `json:"a"`
			B int    `json:"b"`
		}{}, true},
		{"another type", &struct {
			A string `json:"a"`
			B string `json:"b,omitempty"`
		}{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := mirrorDiffs(&base{}, tt.other); (len(got) > 0) != tt.want {
				t.Errorf("differences %q, want some: %v", got, tt.want)
			}
		})
	}
}

// TestWireConstantsMatchTheNodes: the names api/wire gives the API's enumerations and limits
// are the node's.
func TestWireConstantsMatchTheNodes(t *testing.T) {
	pairs := [][2]string{
		{string(wire.ActionClaim), string(escrow.ActionClaim)}, {string(wire.ActionAssign), string(escrow.ActionAssign)},
		{string(wire.ActionSubmit), string(escrow.ActionSubmit)}, {string(wire.ActionAccept), string(escrow.ActionAccept)},
		{string(wire.ActionReject), string(escrow.ActionReject)}, {string(wire.ActionDispute), string(escrow.ActionDispute)},
		{string(wire.ActionResolve), string(escrow.ActionResolve)}, {string(wire.ActionResolveExpired), string(escrow.ActionResolveExpired)},
		{string(wire.ActionRelease), string(escrow.ActionRelease)}, {string(wire.ActionRefund), string(escrow.ActionRefund)},
		{string(wire.ActionCancel), string(escrow.ActionCancel)}, {string(wire.ActionUnclaim), string(escrow.ActionUnclaim)},
		{string(wire.BountyOpen), string(escrow.StatusOpen)}, {string(wire.BountyAssigned), string(escrow.StatusAssigned)},
		{string(wire.BountySubmitted), string(escrow.StatusSubmitted)}, {string(wire.BountyDisputed), string(escrow.StatusDisputed)},
		{string(wire.BountyAccepted), string(escrow.StatusAccepted)}, {string(wire.BountyReleased), string(escrow.StatusReleased)},
		{string(wire.BountyResolved), string(escrow.StatusResolved)}, {string(wire.BountyRefunded), string(escrow.StatusRefunded)},
		{string(wire.BountyCancelled), string(escrow.StatusCancelled)},
		{string(wire.OpStake), string(stake.OpStake)}, {string(wire.OpUnbond), string(stake.OpUnbond)},
		{string(wire.OpWithdrawStake), string(stake.OpWithdrawStake)}, {string(wire.OpRevoke), string(stake.OpRevoke)},
		{string(wire.OpRotate), string(stake.OpRotate)},
		{string(wire.StakeBound), string(stake.StatusBound)}, {string(wire.StakeRotated), string(stake.StatusRotated)},
		{string(wire.StakeRevoked), string(stake.StatusRevoked)}, {string(wire.StakeNone), string(stake.StatusNone)},
		{string(wire.KeyActive), string(stake.KeyActive)}, {string(wire.KeyRevoked), string(stake.KeyRevoked)},
		{string(wire.KeyRotated), string(stake.KeyRotated)},
		{string(wire.KeyActive), string(identity.KeyActive)}, {string(wire.KeyRevoked), string(identity.KeyRevoked)},
		{string(wire.KeyRotated), string(identity.KeyRotated)},
		{fmt.Sprint(wire.MaxEnvelopeSize), fmt.Sprint(identity.MaxEnvelopeSize)},
	}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("api/wire says %q where the node says %q", p[0], p[1])
		}
	}
	var actions []string
	for _, p := range pairs[:12] {
		actions = append(actions, p[0])
	}
	slices.Sort(actions)
	if diff := cmp.Diff(api.BountyActions(), actions); diff != "" {
		t.Errorf("wire's actions are not the routes' (-routes +wire):\n%s", diff)
	}
	for _, s := range pairs[12:21] {
		if got, want := wire.BountyStatus(s[0]).Terminal(), escrow.Status(s[1]).Terminal(); got != want {
			t.Errorf("status %s: wire says terminal %v, escrow %v", s[0], got, want)
		}
	}
	ops := append(slices.Collect(func(yield func(wire.StakeOp) bool) {
		for op := range client.StakePaths {
			if !yield(op) {
				return
			}
		}
	}), wire.OpRevoke, wire.OpRotate)
	for _, op := range ops {
		if client.StakePaths[op] == "" && client.KeyChangePaths[op] == "" {
			t.Errorf("the client has no route for %s", op)
		}
	}
	for _, a := range []reputation.Audit{
		{Bounty: &identity.BountyRef{ChainID: 1337, Escrow: "0xAbC", ID: 7}},
		{Envelope: "env-1"},
	} {
		data, _ := json.Marshal(a)
		var w wire.Audit
		if err := json.Unmarshal(data, &w); err != nil || w.Target() != a.Target() {
			t.Errorf("wire names the target %q (%v), reputation %q", w.Target(), err, a.Target())
		}
	}
}

// mirrorDiffs says where the JSON of a and b (pointers to structs) differ: each one's value,
// zero and with every field set, must decode into the other with no unknown field and come
// back as the same JSON.
func mirrorDiffs(a, b any) []string {
	var out []string
	for _, dir := range [][2]any{{a, b}, {b, a}} {
		for _, filled := range []bool{false, true} {
			from := reflect.New(reflect.TypeOf(dir[0]).Elem())
			if filled {
				fillValue(from.Elem(), 0)
			}
			to := reflect.New(reflect.TypeOf(dir[1]).Elem())
			if d := jsonThrough(from.Interface(), to.Interface()); d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}

// jsonThrough decodes the JSON of from into to and says how to's JSON differs ("" when not).
func jsonThrough(from, to any) string {
	data, err := json.Marshal(from)
	if err != nil {
		return fmt.Sprintf("%T: %v", from, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(to); err != nil {
		return fmt.Sprintf("%s does not decode into %T: %v", clip(data, 300), to, err)
	}
	back, err := json.Marshal(to)
	if err != nil {
		return fmt.Sprintf("%T: %v", to, err)
	}
	var x, y any
	_ = json.Unmarshal(data, &x)
	_ = json.Unmarshal(back, &y)
	if diff := cmp.Diff(x, y); diff != "" {
		return fmt.Sprintf("%T through %T changes the JSON (-%[1]T +%[2]T):\n%s", from, to, diff)
	}
	return ""
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// fillValue sets every exported field of v, and what they hold, to a value that is not zero.
func fillValue(v reflect.Value, depth int) {
	if depth > 8 || !v.CanSet() {
		return
	}
	switch v.Type() {
	case timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
		return
	case rawType:
		v.Set(reflect.ValueOf(json.RawMessage(`{"k":[1,"x"]}`)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s-" + strings.ToLower(v.Type().Name()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.25)
	case reflect.Array:
		for i := range v.Len() {
			fillValue(v.Index(i), depth+1)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillValue(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillValue(k, depth+1)
		fillValue(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fillValue(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			fillValue(v.Field(i), depth+1)
		}
	}
}
