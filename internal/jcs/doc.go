// Package jcs is the JSON Canonicalization Scheme of RFC 8785: object members sorted by
// their names' UTF-16 code units, no whitespace, strings with the fewest escapes, numbers
// as ECMAScript serializes an IEEE 754 double. A2A Agent Card signatures (A2A v1.0 §8.4)
// are taken over it. Transform parses untrusted I-JSON (RFC 7493: no duplicate names, no
// lone surrogates, valid UTF-8, bounded depth and size) and writes its canonical form;
// Append writes a value already held in Go.
package jcs
