// Package benchref holds the reference benchmarks that Surety's own figures are compared with
// in the same `make bench` run: the raw primitive under each figure, measured on this machine
// at the same moment, so a ratio stays meaningful on a noisy or slower host.
//
//   - BenchmarkEd25519Sign, BenchmarkEd25519Verify: crypto/ed25519 on a payload the size of an
//     envelope's JWS signing input (what identity's envelopes sign and verify).
//   - BenchmarkSQLiteInsert, BenchmarkSQLiteRead: one autocommit INSERT, and one SELECT by
//     primary key, on a WAL-mode file database opened by internal/sqlite (the node's pragmas).
//   - BenchmarkEchoHandler: GET on a bare echo handler that answers a small JSON object,
//     served as api's BenchmarkInfo serves GET /v1/info (ServeHTTP into an httptest recorder),
//     without the node's middleware or data.
//
// The package has no code of its own: the benchmarks are in its test file.
package benchref
