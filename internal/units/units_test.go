package units

import (
	"math"
	"math/big"
	"testing"
)

func TestWholeAndFormat(t *testing.T) {
	usdc := Token{Symbol: "USDC", Decimals: 6}
	tests := []struct {
		tok    Token
		base   string
		whole  float64
		format string
	}{
		{Ether, "1500000000000000000", 1.5, "1.5"},
		{Ether, "1", 1e-18, "0.000000000000000001"},
		{Ether, "0", 0, "0"},
		{Ether, "-2000000000000000000", -2, "-2"},
		{usdc, "2500000", 2.5, "2.5"},
		{usdc, "1000000000000000000", 1e12, "1000000000000"},
		{Token{Decimals: 0}, "7", 7, "7"},
	}
	for _, tt := range tests {
		b, _ := new(big.Int).SetString(tt.base, 10)
		if got := tt.tok.Whole(b); got != tt.whole {
			t.Errorf("%s.Whole(%s) = %v, want %v", tt.tok.Symbol, tt.base, got, tt.whole)
		}
		if got := tt.tok.Format(b); got != tt.format {
			t.Errorf("%s.Format(%s) = %q, want %q", tt.tok.Symbol, tt.base, got, tt.format)
		}
	}
	if Ether.Whole(nil) != 0 || Ether.Format(nil) != "0" {
		t.Error("nil is not 0")
	}
}

// TestStakeWeight: no stake is neutral (1), 1 token weighs 2, and the weight grows with the
// logarithm of the stake; splitting a stake in two lifts neither half above the whole.
func TestStakeWeight(t *testing.T) {
	for _, tt := range []struct{ whole, want float64 }{{0, 1}, {-1, 1}, {1, 2}, {10, 1 + math.Log10(91)}, {100, 1 + math.Log10(901)}} {
		if got := StakeWeight(tt.whole); got != tt.want {
			t.Errorf("StakeWeight(%v) = %v, want %v", tt.whole, got, tt.want)
		}
	}
	if StakeWeight(5) >= StakeWeight(10) {
		t.Errorf("half of 10 tokens weighs %v, the whole %v", StakeWeight(5), StakeWeight(10))
	}
}
