	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"gemv.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	beqz	a3, .LBB0_10
	li	a7, 0
	vsetivli	zero, 1, e32, m1, ta, mu
	vmv.s.x	v8, zero
	lui	t0, 8
	j	.LBB0_3
.LBB0_2:
	add	t2, a2, a7
	addi	a7, a7, 1
	sb	t1, 0(t2)
	beq	a7, a3, .LBB0_10
.LBB0_3:
	li	t1, 0
	beqz	a4, .LBB0_6
	li	t2, 0
	mul	t3, a7, a4
	add	t3, a0, t3
.LBB0_5:
	sub	t4, a4, t2
	vsetvli	t4, t4, e8, m1, ta, mu
	add	t5, t3, t2
	vle8.v	v9, (t5)
	add	t5, a1, t2
	vle8.v	v10, (t5)
	vwmul.vv	v12, v9, v10
	vsetvli	zero, t4, e16, m2, ta, mu
	vwredsum.vs	v9, v12, v8
	vsetivli	zero, 0, e32, m1, ta, mu
	vmv.x.s	t5, v9
	add	t2, t4, t2
	add	t1, t5, t1
	bltu	t2, a4, .LBB0_5
.LBB0_6:
	mul	t1, t1, a5
	add	t1, t1, t0
	srai	t1, t1, 16
	add	t1, t1, a6
	li	t2, -128
	blt	t2, t1, .LBB0_8
	li	t1, -128
.LBB0_8:
	li	t2, 127
	blt	t1, t2, .LBB0_2
	li	t1, 127
	j	.LBB0_2
.LBB0_10:
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
