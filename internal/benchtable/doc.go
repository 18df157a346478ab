// Package benchtable turns one `make bench` run into the project's benchmark table: it
// parses `go test -bench` output (custom metrics included) and a `forge snapshot` gas
// snapshot, pairs each figure with the reference it is compared with in the same run, and
// writes a markdown table with the value, the reference, the ratio and the target.
//
// The table is strict so it cannot go stale silently: Build fails when a figure or a
// reference the spec names is missing from the run, when a row names no reference, and when
// the run holds a Go benchmark that no row or reference uses.
package benchtable
