package jcs

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalid is what Transform and Append return for input that has no canonical form:
// not JSON, not I-JSON (a duplicate name, a lone surrogate, invalid UTF-8), a number out of
// the double range, nesting deeper than MaxDepth, or a Go value of another type.
var ErrInvalid = errors.New("jcs: no canonical form")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Transform parses one JSON text and returns its canonical form.
func Transform(data []byte) ([]byte, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return Append(make([]byte, 0, len(data)), v)
}

// Append appends the canonical form of v to dst. v is a tree of what Parse returns: nil,
// bool, float64, string, []any and map[string]any (an int, an int64 or a uint64 within
// ±2^53 is taken as a double too).
func Append(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, v, 0)
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > MaxDepth {
		return nil, invalid("nested deeper than %d", MaxDepth)
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case float64:
		s, err := FormatNumber(x)
		if err != nil {
			return nil, err
		}
		return append(dst, s...), nil
	case int:
		return appendInt(dst, int64(x))
	case int64:
		return appendInt(dst, x)
	case uint64:
		if x > 1<<53 {
			return nil, invalid("integer %d is beyond 2^53", x)
		}
		return appendInt(dst, int64(x))
	case string:
		if !utf8.ValidString(x) {
			return nil, invalid("a string is not UTF-8")
		}
		return AppendString(dst, x), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			if !utf8.ValidString(k) {
				return nil, invalid("a name is not UTF-8")
			}
			keys = append(keys, k)
		}
		SortKeys(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendValue(dst, x[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	default:
		return nil, invalid("a Go %T has no JSON form here", v)
	}
}

func appendInt(dst []byte, i int64) ([]byte, error) {
	if i > 1<<53 || i < -(1<<53) {
		return nil, invalid("integer %d is beyond ±2^53", i)
	}
	s, err := FormatNumber(float64(i))
	if err != nil {
		return nil, err
	}
	return append(dst, s...), nil
}

// SortKeys sorts object member names as RFC 8785 §3.2.3 orders them: by their UTF-16 code
// units, compared as unsigned integers (so U+E000 comes before U+1F600, unlike UTF-8 order).
func SortKeys(keys []string) {
	sort.Slice(keys, func(i, j int) bool { return lessUTF16(keys[i], keys[j]) })
}

func lessUTF16(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// AppendString appends s as a JSON string the way RFC 8785 §3.2.2.2 (ECMAScript's
// JSON.stringify) writes it: '"' and '\' escaped, \b \t \n \f \r for those controls, \u00xx
// (lower-case hex) for the other controls below U+0020, everything else as it is.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// FormatNumber writes a double as ECMAScript's Number.prototype.toString does (RFC 8785
// §3.2.2.3): the shortest digits that read back to the same double, in plain notation for
// magnitudes in [1e-6, 1e21) and exponent notation otherwise; -0 is "0". NaN and the
// infinities have no JSON form.
func FormatNumber(f float64) (string, error) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "", invalid("%v is not a JSON number", f)
	case f == 0:
		return "0", nil
	case f < 0:
		s, err := FormatNumber(-f)
		return "-" + s, err
	}
	// Shortest round-trip digits d1.d2d3…e±x: the digits and n, where the value is
	// 0.digits × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, err := strconv.Atoi(exp)
	if err != nil {
		return "", invalid("format %v", f)
	}
	n, k := x+1, len(digits)
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k), nil
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:], nil
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits, nil
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	abs := n - 1
	if abs < 0 {
		abs = -abs
	}
	if k == 1 {
		return digits + "e" + sign + strconv.Itoa(abs), nil
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + strconv.Itoa(abs), nil
}
