#include "textflag.h"

// func dotsAVX2(q *int16, chunks int, rows *byte, stride int, out *int32, n int)
//
// Rows go four at a time: each 16-component chunk of q is loaded once for
// the four rows, and the four sums are reduced together (VPHADDD). The
// last n%4 rows go one at a time. The chunks are addressed by one index
// running from minus the row's bytes up to 0, from the ends of q and of
// the rows: one add and the loop's jump a chunk.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-48
	MOVQ  q+0(FP), SI
	MOVQ  chunks+8(FP), CX
	MOVQ  rows+16(FP), DI
	MOVQ  stride+24(FP), R8
	MOVQ  out+32(FP), R9
	MOVQ  n+40(FP), R10
	TESTQ CX, CX
	JZ    done
	SHLQ  $4, CX           // the bytes of a row's chunks
	LEAQ  (SI)(CX*2), SI   // the end of q: the loops index back from it

quad:
	CMPQ  R10, $4
	JB    single
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	LEAQ  (DI)(CX*1), BX   // the ends of the four rows' chunks
	LEAQ  (BX)(R8*1), R11
	LEAQ  (BX)(R8*2), R12
	LEAQ  (R11)(R8*2), R13
	MOVQ  CX, DX
	NEGQ  DX               // -bytes up to 0: one index for q and the rows

quadloop:
	VMOVDQU   (SI)(DX*2), Y4
	VPMOVSXBW (BX)(DX*1), Y5
	VPMOVSXBW (R11)(DX*1), Y6
	VPMOVSXBW (R12)(DX*1), Y7
	VPMOVSXBW (R13)(DX*1), Y8
	VPMADDWD  Y4, Y5, Y5
	VPMADDWD  Y4, Y6, Y6
	VPMADDWD  Y4, Y7, Y7
	VPMADDWD  Y4, Y8, Y8
	VPADDD    Y5, Y0, Y0
	VPADDD    Y6, Y1, Y1
	VPADDD    Y7, Y2, Y2
	VPADDD    Y8, Y3, Y3
	ADDQ      $16, DX
	JNZ       quadloop

	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VMOVDQU      X0, (R9)
	ADDQ         $16, R9
	LEAQ         (DI)(R8*4), DI
	SUBQ         $4, R10
	JMP          quad

single:
	TESTQ R10, R10
	JZ    done

row:
	VPXOR Y0, Y0, Y0
	LEAQ  (DI)(CX*1), BX
	MOVQ  CX, DX
	NEGQ  DX

rowloop:
	VPMOVSXBW (BX)(DX*1), Y2
	VPMADDWD  (SI)(DX*2), Y2, Y2
	VPADDD    Y2, Y0, Y0
	ADDQ      $16, DX
	JNZ       rowloop

	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (R9)
	ADDQ         $4, R9
	ADDQ         R8, DI
	DECQ         R10
	JNZ          row

done:
	VZEROUPPER
	RET

// func dotsScaledAVX2(q *int16, chunks int, rows *byte, stride, scaleOff int, out *float32, n int)
//
// dotsAVX2, then each sum times its row's scale, in float32.
TEXT ·dotsScaledAVX2(SB), NOSPLIT, $0-56
	MOVQ  q+0(FP), SI
	MOVQ  chunks+8(FP), CX
	MOVQ  rows+16(FP), DI
	MOVQ  stride+24(FP), R8
	MOVQ  out+40(FP), R9
	MOVQ  n+48(FP), R10
	TESTQ CX, CX
	JZ    sdone
	SHLQ  $4, CX           // the bytes of a row's chunks
	LEAQ  (SI)(CX*2), SI   // the end of q: the loops index back from it

squad:
	CMPQ  R10, $4
	JB    ssingle
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	LEAQ  (DI)(CX*1), BX   // the ends of the four rows' chunks
	LEAQ  (BX)(R8*1), R11
	LEAQ  (BX)(R8*2), R12
	LEAQ  (R11)(R8*2), R13
	MOVQ  CX, DX
	NEGQ  DX               // -bytes up to 0: one index for q and the rows

squadloop:
	VMOVDQU   (SI)(DX*2), Y4
	VPMOVSXBW (BX)(DX*1), Y5
	VPMOVSXBW (R11)(DX*1), Y6
	VPMOVSXBW (R12)(DX*1), Y7
	VPMOVSXBW (R13)(DX*1), Y8
	VPMADDWD  Y4, Y5, Y5
	VPMADDWD  Y4, Y6, Y6
	VPMADDWD  Y4, Y7, Y7
	VPMADDWD  Y4, Y8, Y8
	VPADDD    Y5, Y0, Y0
	VPADDD    Y6, Y1, Y1
	VPADDD    Y7, Y2, Y2
	VPADDD    Y8, Y3, Y3
	ADDQ      $16, DX
	JNZ       squadloop

	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	MOVQ         scaleOff+32(FP), DX
	LEAQ         (DI)(DX*1), AX
	VMOVD        (AX), X1
	VPINSRD      $1, (AX)(R8*1), X1, X1
	VPINSRD      $2, (AX)(R8*2), X1, X1
	LEAQ         (AX)(R8*2), AX
	VPINSRD      $3, (AX)(R8*1), X1, X1
	VMULPS       X1, X0, X0
	VMOVUPS      X0, (R9)
	ADDQ         $16, R9
	LEAQ         (DI)(R8*4), DI
	SUBQ         $4, R10
	JMP          squad

ssingle:
	TESTQ R10, R10
	JZ    sdone

srow:
	VPXOR Y0, Y0, Y0
	LEAQ  (DI)(CX*1), BX
	MOVQ  CX, DX
	NEGQ  DX

srowloop:
	VPMOVSXBW (BX)(DX*1), Y2
	VPMADDWD  (SI)(DX*2), Y2, Y2
	VPADDD    Y2, Y0, Y0
	ADDQ      $16, DX
	JNZ       srowloop

	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	MOVQ         scaleOff+32(FP), DX
	VMOVSS       (DI)(DX*1), X1
	VMULSS       X1, X0, X0
	VMOVSS       X0, (R9)
	ADDQ         $4, R9
	ADDQ         R8, DI
	DECQ         R10
	JNZ          srow

sdone:
	VZEROUPPER
	RET
