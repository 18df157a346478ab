// Package units converts token amounts between the base units the chain counts in (wei for
// ETH) and whole tokens, by the token's decimals, and holds the one stake weight every
// ranking uses. Amounts on chain and in the API stay integers in base units; only ranking and
// scoring, which need a real number, read whole tokens, and they read them here.
package units

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Token is how a token counts: its symbol (for people) and its decimals.
type Token struct {
	Symbol   string
	Decimals uint8
}

// Ether is the chain's native coin: 18 decimals.
var Ether = Token{Symbol: "ETH", Decimals: 18}

// MaxDecimals bounds the decimals a token may report (ERC-20 returns a uint8; beyond 77 no
// uint256 amount reaches one whole token).
const MaxDecimals = 77

// one is 10^decimals.
func (t Token) one() *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(min(t.Decimals, MaxDecimals))), nil)
}

// Whole is base, a base-unit amount, in whole tokens; nil is 0.
func (t Token) Whole(base *big.Int) float64 {
	if base == nil {
		return 0
	}
	v, _ := new(big.Float).Quo(new(big.Float).SetInt(base), new(big.Float).SetInt(t.one())).Float64()
	return v
}

// Format shows a base-unit amount in whole tokens, exactly, without trailing zeros: 1.5 for
// 1500000000000000000 wei.
func (t Token) Format(base *big.Int) string {
	if base == nil {
		return "0"
	}
	neg := base.Sign() < 0
	q, r := new(big.Int).QuoRem(new(big.Int).Abs(base), t.one(), new(big.Int))
	out := q.String()
	if r.Sign() != 0 {
		out += "." + strings.TrimRight(fmt.Sprintf("%0*s", int(min(t.Decimals, MaxDecimals)), r.String()), "0")
	}
	if neg {
		out = "-" + out
	}
	return out
}

// StakeWeight turns a stake, in whole tokens, into a ranking weight: 1 for none, growing with
// its logarithm (1 token → 2, 10 → 3, 100 → 4, ...), so stake matters but a whale cannot buy
// the top of every search; concave, so splitting a stake across agents lifts none of them
// above the whole.
func StakeWeight(whole float64) float64 {
	if whole <= 0 {
		return 1
	}
	return 1 + math.Log10(1+9*whole)
}
