	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"softmax.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	beqz	a2, .LBB0_12
	li	a5, 0
	li	a6, 128
	vsetivli	zero, 1, e8, m1, ta, mu
	vmv.s.x	v8, a6
	vsetivli	zero, 1, e32, m1, ta, mu
	vmv.s.x	v9, zero
	li	a6, 127
	j	.LBB0_3
.LBB0_2:
	addi	a5, a5, 1
	add	a0, a0, a3
	add	a1, a1, a3
	beq	a5, a2, .LBB0_12
.LBB0_3:
	beqz	a3, .LBB0_2
	li	t0, 0
	li	t1, -128
	j	.LBB0_6
.LBB0_5:
	add	t0, t2, t0
	mv	t1, a7
	bgeu	t0, a3, .LBB0_8
.LBB0_6:
	sub	a7, a3, t0
	vsetvli	t2, a7, e8, m1, ta, mu
	add	a7, a0, t0
	vle8.v	v10, (a7)
	vredmax.vs	v10, v10, v8
	vmv.x.s	a7, v10
	blt	t1, a7, .LBB0_5
	mv	a7, t1
	j	.LBB0_5
.LBB0_8:
	li	t1, 0
	li	t0, 0
.LBB0_9:
	sub	t2, a3, t1
	vsetvli	t2, t2, e8, m1, ta, mu
	add	t3, a0, t1
	vle8.v	v10, (t3)
	vsetvli	zero, t2, e32, m4, ta, mu
	vsext.vf4	v12, v10
	vrsub.vx	v12, v12, a7
	vsll.vi	v12, v12, 2
	vluxei32.v	v12, (a4), v12
	vredsum.vs	v10, v12, v9
	vmv.x.s	t3, v10
	add	t1, t2, t1
	add	t0, t3, t0
	bltu	t1, a3, .LBB0_9
	li	t1, 0
.LBB0_11:
	sub	t2, a3, t1
	vsetvli	t2, t2, e8, m1, ta, mu
	add	t3, a0, t1
	vle8.v	v10, (t3)
	vsetvli	zero, t2, e32, m4, ta, mu
	vsext.vf4	v12, v10
	vrsub.vx	v12, v12, a7
	vsll.vi	v12, v12, 2
	vluxei32.v	v12, (a4), v12
	vmul.vx	v12, v12, a6
	vdivu.vx	v12, v12, t0
	vsetvli	zero, zero, e16, m2, ta, mu
	vnsrl.wi	v10, v12, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnsrl.wi	v12, v10, 0
	add	t3, a1, t1
	add	t1, t2, t1
	vse8.v	v12, (t3)
	bltu	t1, a3, .LBB0_11
	j	.LBB0_2
.LBB0_12:
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
