package memlimit

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestLimitFollowsTheLiveHeap(t *testing.T) {
	for _, tt := range []struct {
		live  uint64
		floor int64
		want  int64
	}{
		{0, 192 << 20, 192 << 20},
		{100 << 20, 192 << 20, 192 << 20}, // 1.5 × 100 MiB is under the floor
		{200 << 20, 192 << 20, 300 << 20}, // past it: the limit follows what is live
		{1 << 30, 0, 3 << 29},
	} {
		if got := For(tt.live, tt.floor); got != tt.want {
			t.Errorf("For(%d, %d) = %d, want %d", tt.live, tt.floor, got, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"192MiB", 192 << 20, true}, {"1GiB", 1 << 30, true}, {"512KiB", 512 << 10, true}, {"4096", 4096, true},
		{"10B", 10, true}, {"0", 0, true}, {" 2 GiB ", 2 << 30, true},
		{"", 0, false}, {"-1MiB", 0, false}, {"1.5GiB", 0, false}, {"12MB", 0, false}, {"99999999999GiB", 0, false},
	} {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestStartSetsAndRestores: Start sets the soft limit (at least the floor) and stop puts back
// the one there was; GOMEMLIMIT in the environment, or a floor of 0, leaves it alone.
func TestStartSetsAndRestores(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	stop := Start(1 << 40)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("limit while started: %d, want the floor %d", got, int64(1<<40))
	}
	stop()
	stop() // twice is fine
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after stop: %d, want %d", got, before)
	}
	stop = Start(0)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit with a floor of 0: %d, want %d left alone", got, before)
	}
	stop()
	t.Setenv("GOMEMLIMIT", "1GiB")
	stop = Start(1 << 40)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit with GOMEMLIMIT set: %d, want %d left alone", got, before)
	}
	stop()
}

// TestHoldRaisesTheLimitWhileStarted: Hold raises the limit Start keeps to what the live heap
// and the bytes held call for, never lowers it, and does nothing once stopped.
func TestHoldRaisesTheLimitWhileStarted(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT set: Start keeps no limit")
	}
	before := debug.SetMemoryLimit(-1)
	stop := Start(1 << 20)
	Hold(1 << 40)
	if got, want := debug.SetMemoryLimit(-1), For(1<<40, 1<<20); got < want {
		t.Errorf("limit after holding 1 TiB: %d, want at least %d", got, want)
	}
	raised := debug.SetMemoryLimit(-1)
	Hold(1 << 10)
	if got := debug.SetMemoryLimit(-1); got != raised {
		t.Errorf("limit after holding 1 KiB more: %d, want %d kept", got, raised)
	}
	stop()
	Hold(1 << 41)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after stop and a hold: %d, want %d left alone", got, before)
	}
}

// TestLendRaisesTheLimitUntilDone: Lend raises the limit Start keeps to what the runtime
// holds and the bytes lent, where the limit would not take them, keeps it there against the
// limit's own following (a concurrent Start's tick), and done puts back the limit there was;
// with room enough, or once stopped, it does nothing.
func TestLendRaisesTheLimitUntilDone(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOMEMLIMIT set: Start keeps no limit")
	}
	before := debug.SetMemoryLimit(-1)
	stop := Start(1 << 30)
	kept := debug.SetMemoryLimit(-1)
	done := Lend(1 << 40)
	if got := debug.SetMemoryLimit(-1); got < 1<<40 {
		t.Errorf("limit while 1 TiB is lent: %d, want at least %d", got, int64(1<<40))
	}
	Lend(1 << 41)() // one loan at a time: the second does nothing
	if got := debug.SetMemoryLimit(-1); got < 1<<40 {
		t.Errorf("limit after a second loan's done: %d, want the first loan's kept", got)
	}
	done()
	done() // twice is fine
	if got := debug.SetMemoryLimit(-1); got != kept {
		t.Errorf("limit after the loan: %d, want the one before it, %d", got, kept)
	}
	room := debug.SetMemoryLimit(-1)
	Lend(1)()
	if got := debug.SetMemoryLimit(-1); got != room {
		t.Errorf("limit after a loan the limit had room for: %d, want %d", got, room)
	}
	stop()
	Lend(1 << 40)()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after stop and a loan: %d, want %d left alone", got, before)
	}
}
