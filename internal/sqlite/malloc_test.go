package sqlite_test

import (
	"testing"

	"github.com/surety-ioa/surety/internal/sqlite"
)

// TestLimitMallocArenas: the bound is set where glibc is the C library, and an operator's
// MALLOC_ARENA_MAX is left alone.
func TestLimitMallocArenas(t *testing.T) {
	t.Setenv("MALLOC_ARENA_MAX", "4")
	if sqlite.LimitMallocArenas() {
		t.Error("LimitMallocArenas set a bound over the operator's MALLOC_ARENA_MAX")
	}
	t.Setenv("MALLOC_ARENA_MAX", "")
	if !sqlite.LimitMallocArenas() {
		t.Log("no bound set: the C library is not glibc, or cgo is off")
	}
}
