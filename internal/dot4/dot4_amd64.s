#include "textflag.h"

// func dotsAVX2(q *int8, chunks int, rows *byte, stride int, out *int32, n int)
//
// Each 32-byte chunk of a row is split into its low and high nibbles
// (VPAND, VPSRLW), multiplied by the even and odd query bytes
// (VPMADDUBSW: unsigned codes times signed query, pairs summed into
// int16, at most 2*15*127, so never saturating), the two added and
// widened to int32 pairs (VPMADDWD by ones), then summed over the row.
// Rows go four at a time, sharing the query's loads, their sums reduced
// together (VPHADDD); the last n%4 one at a time.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ chunks+8(FP), CX
	MOVQ rows+16(FP), DI
	MOVQ stride+24(FP), R8
	MOVQ out+32(FP), R9
	MOVQ n+40(FP), R10
	MOVQ CX, R11
	SHLQ $5, R11 // the odd components start chunks*32 bytes in
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ $0x0001000100010001, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14
	TESTQ CX, CX
	JZ    done
	TESTQ R10, R10
	JZ    done

quad:
	CMPQ  R10, $4
	JB    single
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	MOVQ  SI, AX
	MOVQ  DI, BX
	LEAQ  (DI)(R8*1), R12
	LEAQ  (DI)(R8*2), R13
	LEAQ  (R12)(R8*2), DX
	MOVQ  CX, R14

quadloop:
	VMOVDQU    (AX), Y4
	VMOVDQU    (AX)(R11*1), Y5
	VMOVDQU    (BX), Y6
	VMOVDQU    (R12), Y8
	VMOVDQU    (R13), Y10
	VMOVDQU    (DX), Y12
	VPSRLW     $4, Y6, Y7
	VPSRLW     $4, Y8, Y9
	VPSRLW     $4, Y10, Y11
	VPSRLW     $4, Y12, Y13
	VPAND      Y15, Y6, Y6
	VPAND      Y15, Y7, Y7
	VPAND      Y15, Y8, Y8
	VPAND      Y15, Y9, Y9
	VPAND      Y15, Y10, Y10
	VPAND      Y15, Y11, Y11
	VPAND      Y15, Y12, Y12
	VPAND      Y15, Y13, Y13
	VPMADDUBSW Y4, Y6, Y6
	VPMADDUBSW Y5, Y7, Y7
	VPMADDUBSW Y4, Y8, Y8
	VPMADDUBSW Y5, Y9, Y9
	VPMADDUBSW Y4, Y10, Y10
	VPMADDUBSW Y5, Y11, Y11
	VPMADDUBSW Y4, Y12, Y12
	VPMADDUBSW Y5, Y13, Y13
	VPADDW     Y7, Y6, Y6
	VPADDW     Y9, Y8, Y8
	VPADDW     Y11, Y10, Y10
	VPADDW     Y13, Y12, Y12
	VPMADDWD   Y14, Y6, Y6
	VPMADDWD   Y14, Y8, Y8
	VPMADDWD   Y14, Y10, Y10
	VPMADDWD   Y14, Y12, Y12
	VPADDD     Y6, Y0, Y0
	VPADDD     Y8, Y1, Y1
	VPADDD     Y10, Y2, Y2
	VPADDD     Y12, Y3, Y3
	ADDQ       $32, AX
	ADDQ       $32, BX
	ADDQ       $32, R12
	ADDQ       $32, R13
	ADDQ       $32, DX
	DECQ       R14
	JNZ        quadloop

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
	MOVQ  SI, AX
	MOVQ  DI, BX
	MOVQ  CX, DX

loop:
	VMOVDQU    (BX), Y1
	VPSRLW     $4, Y1, Y2
	VPAND      Y15, Y1, Y1
	VPAND      Y15, Y2, Y2
	VPMADDUBSW (AX), Y1, Y1
	VPMADDUBSW (AX)(R11*1), Y2, Y2
	VPADDW     Y2, Y1, Y1
	VPMADDWD   Y14, Y1, Y1
	VPADDD     Y1, Y0, Y0
	ADDQ       $32, AX
	ADDQ       $32, BX
	DECQ       DX
	JNZ        loop

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

// func dotsScaledAVX2(q *int8, chunks int, rows *byte, stride, fieldOff int, qsum float32, out *float32, n int)
//
// dotsAVX2, then each row's sum d turned into lo*qsum + step*d, in
// float32, lo and step the float32s at bytes fieldOff and fieldOff+4 of
// the row.
TEXT ·dotsScaledAVX2(SB), NOSPLIT, $0-64
	MOVQ q+0(FP), SI
	MOVQ chunks+8(FP), CX
	MOVQ rows+16(FP), DI
	MOVQ stride+24(FP), R8
	MOVQ out+48(FP), R9
	MOVQ n+56(FP), R10
	MOVQ CX, R11
	SHLQ $5, R11 // the odd components start chunks*32 bytes in
	MOVQ $0x0f0f0f0f0f0f0f0f, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ $0x0001000100010001, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14
	TESTQ CX, CX
	JZ    sdone
	TESTQ R10, R10
	JZ    sdone

squad:
	CMPQ  R10, $4
	JB    ssingle
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	MOVQ  SI, AX
	MOVQ  DI, BX
	LEAQ  (DI)(R8*1), R12
	LEAQ  (DI)(R8*2), R13
	LEAQ  (R12)(R8*2), DX
	MOVQ  CX, R14

squadloop:
	VMOVDQU    (AX), Y4
	VMOVDQU    (AX)(R11*1), Y5
	VMOVDQU    (BX), Y6
	VMOVDQU    (R12), Y8
	VMOVDQU    (R13), Y10
	VMOVDQU    (DX), Y12
	VPSRLW     $4, Y6, Y7
	VPSRLW     $4, Y8, Y9
	VPSRLW     $4, Y10, Y11
	VPSRLW     $4, Y12, Y13
	VPAND      Y15, Y6, Y6
	VPAND      Y15, Y7, Y7
	VPAND      Y15, Y8, Y8
	VPAND      Y15, Y9, Y9
	VPAND      Y15, Y10, Y10
	VPAND      Y15, Y11, Y11
	VPAND      Y15, Y12, Y12
	VPAND      Y15, Y13, Y13
	VPMADDUBSW Y4, Y6, Y6
	VPMADDUBSW Y5, Y7, Y7
	VPMADDUBSW Y4, Y8, Y8
	VPMADDUBSW Y5, Y9, Y9
	VPMADDUBSW Y4, Y10, Y10
	VPMADDUBSW Y5, Y11, Y11
	VPMADDUBSW Y4, Y12, Y12
	VPMADDUBSW Y5, Y13, Y13
	VPADDW     Y7, Y6, Y6
	VPADDW     Y9, Y8, Y8
	VPADDW     Y11, Y10, Y10
	VPADDW     Y13, Y12, Y12
	VPMADDWD   Y14, Y6, Y6
	VPMADDWD   Y14, Y8, Y8
	VPMADDWD   Y14, Y10, Y10
	VPMADDWD   Y14, Y12, Y12
	VPADDD     Y6, Y0, Y0
	VPADDD     Y8, Y1, Y1
	VPADDD     Y10, Y2, Y2
	VPADDD     Y12, Y3, Y3
	ADDQ       $32, AX
	ADDQ       $32, BX
	ADDQ       $32, R12
	ADDQ       $32, R13
	ADDQ       $32, DX
	DECQ       R14
	JNZ        squadloop

	VPHADDD      Y1, Y0, Y0
	VPHADDD      Y3, Y2, Y2
	VPHADDD      Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	MOVQ         fieldOff+32(FP), DX
	LEAQ         (DI)(DX*1), AX
	VMOVD        (AX), X1
	VPINSRD      $1, (AX)(R8*1), X1, X1
	VPINSRD      $2, (AX)(R8*2), X1, X1
	LEAQ         (AX)(R8*2), BX
	VPINSRD      $3, (BX)(R8*1), X1, X1
	VMOVD        4(AX), X2
	VPINSRD      $1, 4(AX)(R8*1), X2, X2
	VPINSRD      $2, 4(AX)(R8*2), X2, X2
	VPINSRD      $3, 4(BX)(R8*1), X2, X2
	VBROADCASTSS qsum+40(FP), X4
	VMULPS       X4, X1, X1
	VMULPS       X2, X0, X0
	VADDPS       X1, X0, X0
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
	MOVQ  SI, AX
	MOVQ  DI, BX
	MOVQ  CX, DX

sloop:
	VMOVDQU    (BX), Y1
	VPSRLW     $4, Y1, Y2
	VPAND      Y15, Y1, Y1
	VPAND      Y15, Y2, Y2
	VPMADDUBSW (AX), Y1, Y1
	VPMADDUBSW (AX)(R11*1), Y2, Y2
	VPADDW     Y2, Y1, Y1
	VPMADDWD   Y14, Y1, Y1
	VPADDD     Y1, Y0, Y0
	ADDQ       $32, AX
	ADDQ       $32, BX
	DECQ       DX
	JNZ        sloop

	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	MOVQ         fieldOff+32(FP), DX
	VMOVSS       (DI)(DX*1), X1
	VMOVSS       4(DI)(DX*1), X2
	VMOVSS       qsum+40(FP), X4
	VMULSS       X4, X1, X1
	VMULSS       X2, X0, X0
	VADDSS       X1, X0, X0
	VMOVSS       X0, (R9)
	ADDQ         $4, R9
	ADDQ         R8, DI
	DECQ         R10
	JNZ          srow

sdone:
	VZEROUPPER
	RET
