//go:build !amd64

package semantic

// fastDot is false off amd64: rerank reads queryTable.
const fastDot = false

func dotFast(q *[Dim]int8, row []int8) int32 { return dot8(q, row) }
