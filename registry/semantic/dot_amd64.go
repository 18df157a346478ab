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

// dotRows sets out[j] to the dot product of q and row idx[j] of rows (Dim components each),
// dotFast's integer, for every j of idx: rerank's loop over scattered rows, which prefetches
// each row a few steps before it reads it. Every idx[j] must name a row of rows. Without
// AVX2 it is dot8's loop.
func dotRows(q *[Dim]int8, rows []int8, idx []int32, out []int32) {
	if !fastDot {
		dot8Rows(q, rows, idx, out)
		return
	}
	out = out[:len(idx)]
	if len(idx) == 0 {
		return
	}
	for _, i := range idx { // the assembly reads the rows unchecked
		if i < 0 || (int(i)+1)*Dim > len(rows) {
			panic("semantic: dotRows: row out of range")
		}
	}
	dotRowsAVX2(q, &rows[0], &idx[0], len(idx), &out[0])
}

//go:noescape
func dotRowsAVX2(q *[Dim]int8, rows *int8, idx *int32, n int, out *int32)
