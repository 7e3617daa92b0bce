	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"relu.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	beqz	a2, .LBB0_2
.LBB0_1:
	vsetvli	a3, a2, e8, m1, ta, mu
	vle8.v	v8, (a0)
	vmax.vx	v8, v8, zero
	vse8.v	v8, (a1)
	add	a0, a0, a3
	sub	a2, a2, a3
	add	a1, a1, a3
	bnez	a2, .LBB0_1
.LBB0_2:
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
