package main

import (
	"os"
	"testing"

	"github.com/surety-ioa/surety/internal/testutil"
)

// surety is the real binary, built once per test run for the tests that run it as a process.
var surety = testutil.Binary{Package: "github.com/surety-ioa/surety/cmd/surety"}

func TestMain(m *testing.M) {
	code := m.Run()
	surety.Remove()
	os.Exit(code)
}
