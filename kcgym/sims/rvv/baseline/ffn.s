	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"ffn.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	addi	sp, sp, -32
	sw	s0, 28(sp)
	sw	s1, 24(sp)
	sw	s2, 20(sp)
	sw	s3, 16(sp)
	sw	s4, 12(sp)
	sw	s5, 8(sp)
	lw	t0, 0(a7)
	beqz	t0, .LBB0_22
	lw	t1, 4(a7)
	lw	t2, 8(a7)
	lw	t3, 12(a7)
	lw	t4, 20(a7)
	li	t5, 0
	j	.LBB0_3
.LBB0_2:
	addi	t5, t5, 1
	add	a0, a0, t1
	beq	t5, t0, .LBB0_11
.LBB0_3:
	beqz	t2, .LBB0_2
	li	t6, 0
	mul	s0, t5, t2
	add	s0, a6, s0
	j	.LBB0_6
.LBB0_5:
	vsetvli	zero, zero, e32, m4, ta, mu
	vmul.vx	v8, v8, t3
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, t4
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	vmax.vx	v8, v8, zero
	add	s2, s0, t6
	add	t6, s1, t6
	vse8.v	v8, (s2)
	bgeu	t6, t2, .LBB0_2
.LBB0_6:
	sub	s1, t2, t6
	vsetvli	s1, s1, e32, m4, ta, mu
	beqz	a2, .LBB0_8
	slli	s2, t6, 2
	add	s2, a2, s2
	vle32.v	v8, (s2)
	bnez	t1, .LBB0_9
	j	.LBB0_5
.LBB0_8:
	vmv.v.i	v8, 0
	beqz	t1, .LBB0_5
.LBB0_9:
	add	s2, a1, t6
	mv	s3, a0
	mv	s4, t1
.LBB0_10:
	vsetvli	zero, zero, e8, m1, ta, mu
	vle8.v	v12, (s2)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	s5, 0(s3)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, s5, v16
	addi	s4, s4, -1
	addi	s3, s3, 1
	add	s2, s2, t2
	bnez	s4, .LBB0_10
	j	.LBB0_5
.LBB0_11:
	lw	a0, 0(a7)
	beqz	a0, .LBB0_22
	lw	a1, 8(a7)
	lw	a2, 4(a7)
	lw	t0, 20(a7)
	lw	a7, 16(a7)
	li	t1, 0
	j	.LBB0_14
.LBB0_13:
	addi	t1, t1, 1
	add	a6, a6, a1
	beq	t1, a0, .LBB0_22
.LBB0_14:
	beqz	a2, .LBB0_13
	li	t2, 0
	mul	t3, t1, a2
	add	t3, a5, t3
	j	.LBB0_17
.LBB0_16:
	vsetvli	zero, zero, e32, m4, ta, mu
	vmul.vx	v8, v8, a7
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, t0
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	add	t5, t3, t2
	add	t2, t4, t2
	vse8.v	v8, (t5)
	bgeu	t2, a2, .LBB0_13
.LBB0_17:
	sub	t4, a2, t2
	vsetvli	t4, t4, e32, m4, ta, mu
	beqz	a4, .LBB0_19
	slli	t5, t2, 2
	add	t5, a4, t5
	vle32.v	v8, (t5)
	bnez	a1, .LBB0_20
	j	.LBB0_16
.LBB0_19:
	vmv.v.i	v8, 0
	beqz	a1, .LBB0_16
.LBB0_20:
	add	t5, a3, t2
	mv	t6, a6
	mv	s0, a1
.LBB0_21:
	vsetvli	zero, zero, e8, m1, ta, mu
	vle8.v	v12, (t5)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	s1, 0(t6)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, s1, v16
	addi	s0, s0, -1
	addi	t6, t6, 1
	add	t5, t5, a2
	bnez	s0, .LBB0_21
	j	.LBB0_16
.LBB0_22:
	lw	s0, 28(sp)
	lw	s1, 24(sp)
	lw	s2, 20(sp)
	lw	s3, 16(sp)
	lw	s4, 12(sp)
	lw	s5, 8(sp)
	addi	sp, sp, 32
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
