package jcs

// MaxDepth bounds how deeply arrays and objects nest in what Transform parses: a parser of
// untrusted bytes must not recurse without bound.
const MaxDepth = 64
