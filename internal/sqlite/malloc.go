package sqlite

import (
	"os"
	"runtime"
)

// LimitMallocArenas bounds the arenas glibc's malloc, which SQLite allocates from, keeps:
// one per CPU the Go runtime runs on (at least 2), instead of glibc's 8 per core. Every OS
// thread that calls into SQLite gets an arena of its own while there are fewer than the
// maximum, and memory freed in one arena serves only the threads of that one: under a flood
// of requests, with scores of threads in SQLite at once, node 0 of BenchmarkPublicNodeLoad
// held twice its C memory's peak as free pages. As many arenas as CPUs still lets every
// thread that runs at once allocate without waiting for another. An operator's
// MALLOC_ARENA_MAX wins; it does nothing where the C library is not glibc, and reports
// whether it set the bound. A node's process calls it once, at start.
func LimitMallocArenas() bool {
	if os.Getenv("MALLOC_ARENA_MAX") != "" {
		return false
	}
	return setMallocArenas(max(2, runtime.GOMAXPROCS(0)))
}
