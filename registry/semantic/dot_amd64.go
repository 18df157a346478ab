package semantic

import "golang.org/x/sys/cpu"

// fastDot says whether dotFast runs on AVX2 here; the table of queryTable is then not
// needed.
var fastDot = cpu.X86.HasAVX2

// dotFast is dot8 (the same integer: every product and sum is exact in int32) in AVX2: 16
// components a step, sign-extended to 16 bits, multiplied and added in pairs.
// Without AVX2 it is dot8.
func dotFast(q *[Dim]int8, row []int8) int32 {
	if !fastDot {
		return dot8(q, row)
	}
	return dotAVX2(q, &row[:Dim][0])
}

//go:noescape
func dotAVX2(q *[Dim]int8, row *int8) int32
