#include "textflag.h"

// SUM_INTO_AX adds the sixteen int32 lanes of Y0 and Y4 (eight each) into AX (clobbers X1).
#define SUM_INTO_AX \
	VPADDD Y4, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0x4E, X0, X1; \
	VPADDD X1, X0, X0; \
	VPSHUFD $0xB1, X0, X1; \
	VPADDD X1, X0, X0; \
	VMOVD X0, AX

// func dotAVX2(q *[Dim]int8, row *int8) int32, Dim = 128: the sum of q[j]·row[j] in int32.
TEXT ·dotAVX2(SB), NOSPLIT, $0-20
	MOVQ q+0(FP), SI
	MOVQ row+8(FP), DI
	VPXOR Y0, Y0, Y0
	VPXOR Y4, Y4, Y4
	VPMOVSXBW 0(SI), Y1
	VPMOVSXBW 0(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 16(SI), Y1
	VPMOVSXBW 16(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y4, Y4
	VPMOVSXBW 32(SI), Y1
	VPMOVSXBW 32(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 48(SI), Y1
	VPMOVSXBW 48(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y4, Y4
	VPMOVSXBW 64(SI), Y1
	VPMOVSXBW 64(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 80(SI), Y1
	VPMOVSXBW 80(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y4, Y4
	VPMOVSXBW 96(SI), Y1
	VPMOVSXBW 96(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 112(SI), Y1
	VPMOVSXBW 112(DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y4, Y4
	SUM_INTO_AX
	VZEROUPPER
	MOVL AX, ret+16(FP)
	RET

// AHEAD is how many rows ahead dotRowsAVX2 prefetches.
#define AHEAD 8

// PREFETCH_ROW(i) prefetches both cache lines of row idx[i] (idx in R9, rows in DI; clobbers
// AX).
#define PREFETCH_ROW(i) \
	MOVLQSX (R9)(i*4), AX; \
	SHLQ $7, AX; \
	PREFETCHT0 (DI)(AX*1); \
	PREFETCHT0 64(DI)(AX*1)

// func dotRowsAVX2(q *[Dim]int8, rows *int8, idx *int32, n int, out *int32): out[j] is the
// dot product of q and row idx[j] of rows (Dim components each), for j < n, as dotAVX2
// gives it. The rows are read scattered, so each step prefetches the row (both cache lines)
// AHEAD steps ahead: the misses overlap instead of coming one after another.
TEXT ·dotRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), DI
	MOVQ idx+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), R10
	VPMOVSXBW 0(SI), Y8
	VPMOVSXBW 16(SI), Y9
	VPMOVSXBW 32(SI), Y10
	VPMOVSXBW 48(SI), Y11
	VPMOVSXBW 64(SI), Y12
	VPMOVSXBW 80(SI), Y13
	VPMOVSXBW 96(SI), Y14
	VPMOVSXBW 112(SI), Y15
	XORQ BX, BX
	// the first AHEAD rows
	MOVQ $AHEAD, DX
	CMPQ DX, CX
	CMOVQGT CX, DX
	XORQ R12, R12
warm:
	CMPQ R12, DX
	JGE loop
	PREFETCH_ROW(R12)
	INCQ R12
	JMP warm
loop:
	CMPQ BX, CX
	JGE done
	LEAQ AHEAD(BX), DX
	CMPQ DX, CX
	JGE noahead
	PREFETCH_ROW(DX)
noahead:
	MOVLQSX (R9)(BX*4), AX
	SHLQ $7, AX
	LEAQ (DI)(AX*1), R11
	VPMOVSXBW 0(R11), Y2
	VPMADDWD Y8, Y2, Y0
	VPMOVSXBW 16(R11), Y2
	VPMADDWD Y9, Y2, Y4
	VPMOVSXBW 32(R11), Y2
	VPMADDWD Y10, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 48(R11), Y2
	VPMADDWD Y11, Y2, Y3
	VPADDD Y3, Y4, Y4
	VPMOVSXBW 64(R11), Y2
	VPMADDWD Y12, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 80(R11), Y2
	VPMADDWD Y13, Y2, Y3
	VPADDD Y3, Y4, Y4
	VPMOVSXBW 96(R11), Y2
	VPMADDWD Y14, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 112(R11), Y2
	VPMADDWD Y15, Y2, Y3
	VPADDD Y3, Y4, Y4
	SUM_INTO_AX
	MOVL AX, (R10)(BX*4)
	INCQ BX
	JMP loop
done:
	VZEROUPPER
	RET
