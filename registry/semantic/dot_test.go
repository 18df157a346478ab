package semantic

import (
	"math/rand/v2"
	"testing"
)

// TestDotFast: dotFast is dot8, the same integer, on random rows and on the extremes.
func TestDotFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 10_000 {
		var q [Dim]int8
		row := make([]int8, Dim)
		for j := range Dim {
			switch i % 4 {
			case 0:
				q[j], row[j] = 127, 127
			case 1:
				q[j], row[j] = -127, 127
			default:
				q[j], row[j] = int8(rng.IntN(255)-127), int8(rng.IntN(255)-127)
			}
		}
		if got, want := dotFast(&q, row), dot8(&q, row); got != want {
			t.Fatalf("dotFast %d, dot8 %d", got, want)
		}
	}
}

// TestPrefilterTable: set's table is, for each byte of a code and each value, the sum of
// |q[j]| over the bits the value sets.
func TestPrefilterTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var sc prefilterScratch
	for range 20 {
		var q [Dim]int8
		for j := range q {
			q[j] = int8(rng.IntN(255) - 127)
		}
		sc.set(&q)
		for b := range sc.far {
			for v := range 256 {
				w := 0
				for i := range 8 {
					if v&(1<<i) != 0 {
						w += abs8(q[b*8+i])
					}
				}
				if int(sc.far[b][v]) != w {
					t.Fatalf("far[%d][%d] = %d, want %d", b, v, sc.far[b][v], w)
				}
			}
		}
	}
}

// TestDotRows: dotRows gives, row by row, dot8's integer for rows read in any order (the
// assembly's prefetching loop where the CPU has AVX2), for lists shorter and longer than the
// distance it prefetches ahead, and refuses a row the matrix does not hold.
func TestDotRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 500
	rows := make([]int8, n*Dim)
	for j := range rows {
		rows[j] = int8(rng.IntN(255) - 127)
	}
	for _, size := range []int{0, 1, 2, 3, 4, 7, 8, 9, 64, 1000} {
		var q [Dim]int8
		for j := range q {
			q[j] = int8(rng.IntN(255) - 127)
		}
		idx := make([]int32, size)
		for j := range idx {
			idx[j] = int32(rng.IntN(n))
		}
		out := make([]int32, size)
		dotRows(&q, rows, idx, out)
		for j, i := range idx {
			if want := dot8(&q, rows[int(i)*Dim:(int(i)+1)*Dim]); out[j] != want {
				t.Fatalf("%d rows: row %d (index %d): %d, dot8 %d", size, j, i, out[j], want)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("dotRows read row n of a matrix of n rows")
		}
	}()
	var q [Dim]int8
	dotRows(&q, rows, []int32{0, n}, make([]int32, 2))
}
