package jcs

import (
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse reads one I-JSON text (RFC 7493) into nil, bool, float64, string, []any and
// map[string]any. It refuses what has no single canonical form: invalid UTF-8, a lone
// surrogate escape, a duplicate member name, a number beyond the double range, nesting
// deeper than MaxDepth, and anything after the value but whitespace.
func Parse(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, invalid("not UTF-8")
	}
	p := parser{b: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.b) {
		return nil, invalid("data after the value at byte %d", p.i)
	}
	return v, nil
}

type parser struct {
	b []byte
	i int
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) literal(s string, v any) (any, error) {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return nil, invalid("unexpected input at byte %d", p.i)
	}
	p.i += len(s)
	return v, nil
}

func (p *parser) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, invalid("nested deeper than %d", MaxDepth)
	}
	if p.i >= len(p.b) {
		return nil, invalid("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.string()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		return nil, invalid("unexpected %q at byte %d", c, p.i)
	}
}

func (p *parser) object(depth int) (any, error) {
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, invalid("a member name must be a string (byte %d)", p.i)
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, invalid("member %q appears twice", k)
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, invalid("':' expected at byte %d", p.i)
		}
		p.i++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.space()
		if p.i >= len(p.b) {
			return nil, invalid("unexpected end in an object")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, invalid("',' or '}' expected at byte %d", p.i)
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, invalid("unexpected end in an array")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, invalid("',' or ']' expected at byte %d", p.i)
		}
	}
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *parser) string() (string, error) {
	p.i++ // "
	var out []byte
	for {
		if p.i >= len(p.b) {
			return "", invalid("unterminated string")
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", invalid("control character in a string at byte %d", p.i)
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		// an escape
		if p.i+1 >= len(p.b) {
			return "", invalid("unterminated escape")
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(p.b[p.i:])
			if !ok {
				return "", invalid("bad \\u escape at byte %d", p.i)
			}
			p.i += 4
			if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || p.i+6 > len(p.b) || p.b[p.i] != '\\' || p.b[p.i+1] != 'u' {
					return "", invalid("lone surrogate \\u%04x", r)
				}
				r2, ok := hex4(p.b[p.i+2:])
				if !ok || r2 < 0xdc00 || r2 > 0xdfff {
					return "", invalid("lone surrogate \\u%04x", r)
				}
				p.i += 6
				r = utf16.DecodeRune(r, r2)
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", invalid("bad escape \\%c", e)
		}
	}
}

func (p *parser) number() (any, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.b[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, invalid("bad number at byte %d", start)
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, invalid("bad number at byte %d", start)
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, invalid("bad number at byte %d", start)
		}
	}
	f, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, invalid("number %s is beyond the double range", p.b[start:p.i])
	}
	return f, nil
}
