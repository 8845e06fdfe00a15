#include "textflag.h"

// func squaresAVX(b *byte, v *float32, n int) float64
//
// Four components a step: copied, widened to float64 and squared at
// once; the four squares then added to the sum one at a time, in order
// (VADDSD), as the scalar loop adds them.
TEXT ·squaresAVX(SB), NOSPLIT, $0-32
	MOVQ   b+0(FP), SI
	MOVQ   v+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPD X0, X0, X0
	XORQ   AX, AX

squares:
	CMPQ         AX, CX
	JGE          squaresDone
	VMOVUPS      (SI)(AX*4), X1
	VMOVUPS      X1, (DI)(AX*4)
	VCVTPS2PD    X1, Y2
	VMULPD       Y2, Y2, Y2
	VADDSD       X2, X0, X0
	VUNPCKHPD    X2, X2, X3
	VADDSD       X3, X0, X0
	VEXTRACTF128 $1, Y2, X4
	VADDSD       X4, X0, X0
	VUNPCKHPD    X4, X4, X5
	VADDSD       X5, X0, X0
	ADDQ         $4, AX
	JMP          squares

squaresDone:
	VZEROUPPER
	MOVSD X0, ret+24(FP)
	RET

// func scaleAVX(v *float32, n int, inv float64)
//
// Eight components a step: widened to float64, multiplied by inv and
// rounded back to float32 (VCVTPD2PS rounds as the MXCSR says, to
// nearest even, as Go's conversion).
TEXT ·scaleAVX(SB), NOSPLIT, $0-24
	MOVQ         v+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSD inv+16(FP), Y0
	XORQ         AX, AX

scale:
	CMPQ       AX, CX
	JGE        scaleDone
	VCVTPS2PD  (DI)(AX*4), Y1
	VCVTPS2PD  16(DI)(AX*4), Y2
	VMULPD     Y0, Y1, Y1
	VMULPD     Y0, Y2, Y2
	VCVTPD2PSY Y1, X1
	VCVTPD2PSY Y2, X2
	VMOVUPS    X1, (DI)(AX*4)
	VMOVUPS    X2, 16(DI)(AX*4)
	ADDQ       $8, AX
	JMP        scale

scaleDone:
	VZEROUPPER
	RET
