package main

import (
	"os"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// surety is the real binary, built once per test run for the tests that run it as a process.
var surety = testutil.Binary{Package: "github.com/surety-ioa/surety/cmd/surety"}

// waitingParallel is how many of this package's parallel tests run at once (unless -parallel
// says): they mostly wait, on 12 s and 2 s blocks, the node's index and log epochs, so more
// of them than the 2 cores of CI fit side by side.
const waitingParallel = 8

func TestMain(m *testing.M) {
	testutil.WaitingParallel(waitingParallel)
	code := m.Run()
	surety.Remove()
	os.Exit(code)
}
