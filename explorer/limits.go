package explorer

// maxAge is how long a browser may keep an asset requested with its content hash (?h=, as
// index.html names it), in seconds: a year; a new build names a new hash.
const maxAge = "31536000"
