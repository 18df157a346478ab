package main

import (
	"context"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/surety-ioa/surety/contracts"
)

// balanceLine is a final balance the demo prints: name, address, wei.
var balanceLine = regexp.MustCompile(`(?m)^  balance (\S+) +(0x[0-9a-fA-F]{40}) (\d+) wei`)

// storyLines are what every run of the demo must tell.
var storyLines = []string{
	"market searches 'audit' + 'solidity': ada",
	"conclusion      market: accepted",
	"accepted: ada is owed",
	"arbiter split 60/40: resolved",
	"it is refunded",
	"backed by the settlement: true",
	"reputation of ada: 0.500 -> 0.",
	"auditor checks its audit of ada: verified: leaf",
	"a tampered copy of that audit does not verify",
	"treasury withdraws the fees",
	"the day is over",
}

func checkStory(t *testing.T, out string) [][]string {
	t.Helper()
	for _, want := range storyLines {
		if !strings.Contains(out, want) {
			t.Errorf("the demo did not tell %q:\n%s", want, out)
		}
	}
	balances := balanceLine.FindAllStringSubmatch(out, -1)
	if len(balances) != 9 { // seven parties, the treasury, the escrow
		t.Errorf("%d balances printed, want 9:\n%s", len(balances), out)
	}
	return balances
}

// TestDemoEmbedded plays the demo on its embedded chain (what `make demo` runs).
func TestDemoEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole demo")
	}
	checkStory(t, runOK(t, "", "demo"))
}

// TestDemoOnAnvil plays the demo on a real Anvil: every balance it prints is the chain's.
func TestDemoOnAnvil(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole demo on Anvil")
	}
	devnet := deployOnAnvil(t, contracts.DeployConfig{FeeBps: 50})
	out := runOK(t, "", "demo", "--rpc", devnet.URL, "--deployment", devnet.DepFile)
	for _, b := range checkStory(t, out) {
		got, err := devnet.Client.BalanceAt(context.Background(), common.HexToAddress(b[2]), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := new(big.Int).SetString(b[3], 10); got.Cmp(want) != 0 {
			t.Errorf("%s %s: the demo printed %s wei, the chain says %s", b[1], b[2], want, got)
		}
	}
}
