package main

import (
	"os"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// surety is the real binary, built once per test run for the tests that run it as a process.
var surety = testutil.Binary{Package: "github.com/surety-ioa/surety/cmd/surety"}

// waiting lets 6 of this package's parallel tests run at once, besides its three longest
// waits (TestTwelveSecondBlocks, TestREADMETourWithOwnKeystoresOnSlowAnvil and
// TestOwnWalletStakesOnAnvil, on 12 s, 2 s and 1 s blocks), which start at once: the tests
// mostly wait, on blocks, the node's index and log epochs, so more of them than the 2 cores
// of CI fit side by side.
var waiting = testutil.NewGate(6)

func TestMain(m *testing.M) {
	testutil.WaitingParallel()
	code := m.Run()
	surety.Remove()
	os.Exit(code)
}
