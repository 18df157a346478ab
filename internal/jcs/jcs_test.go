package jcs_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/surety-ioa/surety/internal/jcs"
)

// The number samples of RFC 8785 Appendix B: an IEEE 754 double by its bits, and how
// ECMAScript writes it.
func TestFormatNumberRFC8785AppendixB(t *testing.T) {
	for _, tt := range []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	} {
		got, err := jcs.FormatNumber(math.Float64frombits(tt.bits))
		if err != nil || got != tt.want {
			t.Errorf("FormatNumber(%#016x) = %q, %v; want %q", tt.bits, got, err, tt.want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := jcs.FormatNumber(f); !errors.Is(err, jcs.ErrInvalid) {
			t.Errorf("FormatNumber(%v) = %v, want ErrInvalid", f, err)
		}
	}
}

func TestTransformRFC8785Examples(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{
			// §3.2.2: literals, numbers, strings.
			name: "values",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			// §3.2.3: members sorted by UTF-16 code units (the emoji's surrogates sort before
			// U+FB33, although its code point is higher).
			name: "sorting",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{name: "nested", in: ` [ {"b":[],"a":{}} , -0 , 1e-7, 1e21, 123456789012345678901234567890 ] `, want: `[{"a":{},"b":[]},0,1e-7,1e+21,1.2345678901234568e+29]`},
		{name: "controls", in: `"\u0000\u001f\u007f\u2028"`, want: "\"\\u0000\\u001f\u007f\u2028\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jcs.Transform([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Transform =\n%s\nwant\n%s", got, tt.want)
			}
			again, err := jcs.Transform(got)
			if err != nil || string(again) != string(got) {
				t.Errorf("the canonical form is not canonical again: %s, %v", again, err)
			}
		})
	}
}

func TestTransformRefusesWhatHasNoCanonicalForm(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"duplicate name", `{"a":1,"a":2}`},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00x"`},
		{"high surrogate then not low", `"\ud800\u0041"`},
		{"invalid UTF-8", "\"\xff\""},
		{"number too large", `1e400`},
		{"trailing data", `{} {}`},
		{"leading zero", `01`},
		{"bare control", "\"\x01\""},
		{"too deep", strings.Repeat("[", jcs.MaxDepth+2) + strings.Repeat("]", jcs.MaxDepth+2)},
		{"empty", ``},
		{"unterminated", `{"a":`},
		{"single quotes", `{'a':1}`},
		{"NaN", `NaN`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := jcs.Transform([]byte(tt.in)); !errors.Is(err, jcs.ErrInvalid) {
				t.Errorf("Transform(%q) = %q, %v; want ErrInvalid", tt.in, out, err)
			}
		})
	}
}

func TestAppendGoValues(t *testing.T) {
	got, err := jcs.Append(nil, map[string]any{"z": int64(3), "a": []any{uint64(1 << 53), "x", nil, 1.5, false}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":[9007199254740992,"x",null,1.5,false],"z":3}`; string(got) != want {
		t.Errorf("Append = %s, want %s", got, want)
	}
	for _, v := range []any{uint64(1<<53 + 1), struct{}{}, math.NaN(), "\xff"} {
		if _, err := jcs.Append(nil, v); !errors.Is(err, jcs.ErrInvalid) {
			t.Errorf("Append(%#v) = %v, want ErrInvalid", v, err)
		}
	}
}

// FuzzTransform: what Transform accepts is JSON to encoding/json with the same value, its
// output is its own canonical form, and what encoding/json refuses Transform refuses.
func FuzzTransform(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `1e21`, `-0.0000033333333333333333`, `"\ud83d\ude00\u20ac"`,
		`{"a":{"a":{"a":[]}}}`, `[1,2,3e-7]`, `{"\u0080":1,"\ufb33":2,"\ud83d\ude00":3}`, `{"a":1,"a":2}`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := jcs.Transform(data)
		var std any
		stdErr := json.Unmarshal(data, &std)
		if err != nil {
			if !errors.Is(err, jcs.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if stdErr != nil {
			t.Fatalf("Transform accepted %q, which encoding/json refuses (%v)", data, stdErr)
		}
		again, err := jcs.Transform(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent: %q → %q → %q, %v", data, out, again, err)
		}
		var back any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("canonical form %q is not JSON: %v", out, err)
		}
		if !reflect.DeepEqual(std, back) {
			t.Fatalf("value changed: %q → %q", data, out)
		}
	})
}
