//go:build !amd64

package semantic

// fastDot is false off amd64: rerank reads queryTable.
const fastDot = false

func dotFast(q *[Dim]int8, row []int8) int32 { return dot8(q, row) }

// dotRows sets out[j] to the dot product of q and row idx[j] of rows, for every j of idx.
func dotRows(q *[Dim]int8, rows []int8, idx []int32, out []int32) { dot8Rows(q, rows, idx, out) }
