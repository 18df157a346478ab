package testutil

import (
	"testing"
	"time"
)

// eventuallyPoll is how often Eventually asks again.
const eventuallyPoll = 50 * time.Millisecond

// Eventually waits until ok holds, asking every 50 ms, and fails the test (what says what
// was awaited) when it still does not after within.
func Eventually(t testing.TB, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(eventuallyPoll)
	}
}
