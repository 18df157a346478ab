package reputation

import "math"

// halving is 2^(−x): what an audit's weight is multiplied by after x half-lives. It is
// computed with operations that every IEEE 754 implementation rounds alike: +, −, × and ÷,
// each rounded on its own (float64(…) keeps the compiler from fusing a multiply and an add,
// which arm64 and amd64 v3 builds would otherwise do), and floor and ldexp, which are exact.
// No library exponential: Go's math.Exp2 is assembly on arm64, and JavaScript's Math.pow
// rounds differently from Go's at some arguments, so either would make nodes, auditors and
// the explorer disagree in the last bit. So:
//
//	x = n + f, n whole, f in [0, 1)                       (n = floor(x), f = x − n, exact)
//	y = f · ln 2                                          (math.Ln2 as a float64)
//	r = 1; for k = 24 … 1: r = 1 − (y / k) · r            (e^(−y) by its Taylor series, Horner's form)
//	2^(−x) = r · 2^(−n)                                   (exact for n < 1000; 0 from n = 1000)
//
// The series' 24 terms leave an error below 10^−28 for y < ln 2; the roundings, a few units in
// the last place. docs/REPUTATION.md gives the same steps; the explorer's lib/score.js runs
// them in JavaScript.
func halving(x float64) float64 {
	if !(x > 0) { // 0, a negative age (clamped before), NaN
		return 1
	}
	n := math.Floor(x)
	if n >= halvingZero {
		return 0
	}
	y := float64((x - n) * math.Ln2)
	r := 1.0
	for k := halvingTerms; k >= 1; k-- {
		r = 1 - float64(float64(y/float64(k))*r)
	}
	return math.Ldexp(r, -int(n))
}

const (
	// halvingTerms is how many terms of e^(−y)'s series halving sums.
	halvingTerms = 24
	// halvingZero is the number of half-lives from which halving is 0: 2^(−1000) is far below
	// what a weight's fixed point (2^(−32)) holds, and above it no result is subnormal.
	halvingZero = 1000
)

// halving2 is halving of x0 and of x1, the same steps on each, side by side: the series is a
// chain of a multiply and a subtract per term, and two chains keep the CPU busy where one
// waits on each step (the bits are halving's: each value takes the same operations).
func halving2(x0, x1 float64) (float64, float64) {
	if !(x0 > 0) || !(x1 > 0) || x0 >= halvingZero || x1 >= halvingZero {
		return halving(x0), halving(x1)
	}
	n0, n1 := math.Floor(x0), math.Floor(x1)
	y0, y1 := float64((x0-n0)*math.Ln2), float64((x1-n1)*math.Ln2)
	r0, r1 := 1.0, 1.0
	for k := halvingTerms; k >= 1; k-- {
		fk := float64(k)
		r0 = 1 - float64(float64(y0/fk)*r0)
		r1 = 1 - float64(float64(y1/fk)*r1)
	}
	return math.Ldexp(r0, -int(n0)), math.Ldexp(r1, -int(n1))
}
