package jcs_test

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/surety-ioa/surety/internal/jcs"
	"github.com/surety-ioa/surety/internal/testutil"
)

// randomValue makes a JSON value of random shape: doubles from random bits (all exponents),
// strings over ASCII, controls, Latin, BMP and astral code points, objects whose keys sort
// differently in UTF-8 and UTF-16. empty says whether it holds an empty string, list or
// object or a null (which @a2a-js/sdk drops before it canonicalizes).
func randomValue(r *rand.Rand, depth int) (v any, empty bool) {
	str := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			switch r.IntN(6) {
			case 0:
				b.WriteRune(rune(r.IntN(0x20)))
			case 1:
				b.WriteRune(rune(0x20 + r.IntN(0x5f)))
			case 2:
				b.WriteRune(rune(0x80 + r.IntN(0x700)))
			case 3:
				b.WriteRune(rune(0xe000 + r.IntN(0x1f00)))
			case 4:
				b.WriteRune(rune(0x10000 + r.IntN(0x10000)))
			default:
				b.WriteString(`"\/`)
			}
		}
		return b.String()
	}
	k := r.IntN(7)
	if depth > 3 {
		k = r.IntN(4)
	}
	switch k {
	case 0:
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = 0.5
		}
		return f, false
	case 1:
		return float64(r.Int64N(1<<53)) - float64(int64(1)<<52), false
	case 2:
		s := str()
		return s, s == ""
	case 3:
		return r.IntN(2) == 0, false
	case 4:
		if r.IntN(4) == 0 {
			return nil, true
		}
		fallthrough
	case 5:
		n := r.IntN(4)
		a := make([]any, n)
		empty := n == 0
		for i := range a {
			var e bool
			a[i], e = randomValue(r, depth+1)
			empty = empty || e
		}
		return a, empty
	default:
		n := r.IntN(5)
		m := map[string]any{}
		empty := n == 0
		for range n {
			var e bool
			m[str()], e = randomValue(r, depth+1)
			empty = empty || e
		}
		return m, empty || len(m) == 0
	}
}

// TestTransformAgreesWithJavaScript: two JavaScript implementations of RFC 8785 that are not
// ours, npm's `canonicalize` and @a2a-js/sdk's (through clients/ts/interop/a2a-jcs.mjs),
// write the same canonical form as Transform for the RFC's examples and 300 random values.
func TestTransformAgreesWithJavaScript(t *testing.T) {
	node, script := testutil.NodeScript(t, "a2a-jcs.mjs", "@a2a-js/sdk", "canonicalize")
	texts := []string{
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
		`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
		`[5e-324,-5e-324,1.7976931348623157e308,9007199254740992,295147905179352830000,9.999999999999997e22,1e23,999999999999999700000,1e21,9.999999999999997e-7,0.000001,333333333.33333325,-0.0000033333333333333333,1424953923781206.2]`,
	}
	sdkComparable := []bool{false, true, true} // the first holds a null, which the SDK drops
	r := rand.New(rand.NewPCG(27, 8785))
	for range 300 {
		v, empty := randomValue(r, 0)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
		sdkComparable = append(sdkComparable, !empty)
	}
	in, _ := json.Marshal(texts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("a2a-jcs.mjs: %v", err)
	}
	var theirs []struct {
		Canonicalize string  `json:"canonicalize"`
		SDK          *string `json:"sdk"`
	}
	if err := json.Unmarshal(out, &theirs); err != nil || len(theirs) != len(texts) {
		t.Fatalf("a2a-jcs.mjs answered %d results (%v), want %d", len(theirs), err, len(texts))
	}
	compared := 0
	for i, text := range texts {
		ours, err := jcs.Transform([]byte(text))
		if err != nil {
			t.Errorf("Transform(%s): %v", text, err)
			continue
		}
		if string(ours) != theirs[i].Canonicalize {
			t.Errorf("canonicalize and Transform differ on %s:\n%s\n%s", text, theirs[i].Canonicalize, ours)
		}
		if sdkComparable[i] {
			compared++
			if sdk := theirs[i].SDK; sdk == nil || *sdk != string(ours) {
				t.Errorf("@a2a-js/sdk and Transform differ on %s:\n%v\n%s", text, sdk, ours)
			}
		}
	}
	if compared < 50 {
		t.Errorf("only %d values compared with the SDK", compared)
	}
}
