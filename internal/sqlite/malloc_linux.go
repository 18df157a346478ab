//go:build linux && cgo

package sqlite

/*
#include <malloc.h>

// surety_arena_max sets glibc's M_ARENA_MAX; elsewhere (musl) it does nothing.
static int surety_arena_max(int n) {
#ifdef M_ARENA_MAX
	return mallopt(M_ARENA_MAX, n);
#else
	(void)n;
	return 0;
#endif
}
*/
import "C"

func setMallocArenas(n int) bool { return C.surety_arena_max(C.int(n)) == 1 }
