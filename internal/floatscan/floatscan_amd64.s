#include "textflag.h"

// func clearBelowAVX2(p *float64, n int, bar float64) int
//
// Sixteen sums a step: four compares with bar (LE_OQ: bar <= sum, false
// for a NaN), their masks OR-ed; a group with no sum at or above bar is
// cleared, and the first group with one is left and its start returned.
TEXT ·clearBelowAVX2(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSD bar+16(FP), Y0
	VXORPD       Y1, Y1, Y1
	XORQ         AX, AX

loop:
	CMPQ    AX, CX
	JGE     done
	VCMPPD  $0x12, (DI), Y0, Y2
	VCMPPD  $0x12, 32(DI), Y0, Y3
	VCMPPD  $0x12, 64(DI), Y0, Y4
	VCMPPD  $0x12, 96(DI), Y0, Y5
	VORPD   Y2, Y3, Y2
	VORPD   Y4, Y5, Y4
	VORPD   Y2, Y4, Y2
	VPTEST  Y2, Y2
	JNZ     done
	VMOVUPD Y1, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y1, 64(DI)
	VMOVUPD Y1, 96(DI)
	ADDQ    $16, AX
	ADDQ    $128, DI
	JMP     loop

done:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func notBelow32AVX2(p *float32, n int, bar float32) int
//
// Sixteen scores a step: two compares with bar (NGT_UQ: not bar > score,
// true for a NaN), their masks OR-ed; then a last group of eight when n
// leaves one. The start of the first group with a mask set is returned.
TEXT ·notBelow32AVX2(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS bar+16(FP), Y0
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $-16, DX // the end of the groups of sixteen

nbloop:
	CMPQ   AX, DX
	JGE    nbeight
	VCMPPS $0x1A, (DI), Y0, Y2
	VCMPPS $0x1A, 32(DI), Y0, Y3
	VORPS  Y2, Y3, Y2
	VPTEST Y2, Y2
	JNZ    nbdone
	ADDQ   $16, AX
	ADDQ   $64, DI
	JMP    nbloop

nbeight:
	CMPQ   AX, CX
	JGE    nbdone
	VCMPPS $0x1A, (DI), Y0, Y2
	VPTEST Y2, Y2
	JNZ    nbdone
	ADDQ   $8, AX

nbdone:
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET
