	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"conv_block.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	addi	sp, sp, -96
	sw	ra, 92(sp)
	sw	s0, 88(sp)
	sw	s1, 84(sp)
	sw	s2, 80(sp)
	sw	s3, 76(sp)
	sw	s4, 72(sp)
	sw	s5, 68(sp)
	sw	s6, 64(sp)
	sw	s7, 60(sp)
	sw	s8, 56(sp)
	sw	s9, 52(sp)
	sw	s10, 48(sp)
	sw	s11, 44(sp)
	lw	t0, 0(a7)
	sw	a6, 24(sp)
	sw	a5, 20(sp)
	sw	a4, 40(sp)
	sw	a3, 36(sp)
	blez	t0, .LBB0_35
	li	a6, 0
	lw	s4, 4(a7)
	lw	t3, 12(a7)
	lw	t4, 8(a7)
	lw	t5, 16(a7)
	sw	a7, 8(sp)
	lw	t6, 24(a7)
	srli	a3, t3, 31
	add	a3, t3, a3
	srai	a3, a3, 1
	neg	a3, a3
	sw	a3, 32(sp)
	mul	a3, s4, a3
	addi	a5, t0, 1
	mul	a3, a3, a5
	add	s6, a0, a3
	mul	s1, t0, s4
	mul	s2, t4, s4
	mul	s3, s2, t3
	j	.LBB0_3
.LBB0_2:
	lw	a6, 16(sp)
	addi	a6, a6, 1
	lw	s6, 12(sp)
	add	s6, s6, s1
	beq	a6, t0, .LBB0_18
.LBB0_3:
	li	a4, 0
	lw	a0, 32(sp)
	add	s5, a6, a0
	sw	a6, 16(sp)
	mul	a0, a6, t0
	sw	a0, 28(sp)
	sw	s6, 12(sp)
	j	.LBB0_5
.LBB0_4:
	addi	a4, a4, 1
	add	s6, s6, s4
	beq	a4, t0, .LBB0_2
.LBB0_5:
	blez	t4, .LBB0_4
	li	s8, 0
	lw	a0, 32(sp)
	add	s9, a4, a0
	lw	a0, 28(sp)
	add	a0, a4, a0
	mul	a0, a0, t4
	lw	a3, 24(sp)
	add	s10, a3, a0
	j	.LBB0_8
.LBB0_7:
	vsetvli	zero, s11, e32, m4, ta, mu
	vmul.vx	v8, v8, t5
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, t6
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	vmax.vx	v8, v8, zero
	add	a0, s10, s8
	add	s8, s11, s8
	vse8.v	v8, (a0)
	bge	s8, t4, .LBB0_4
.LBB0_8:
	sub	a0, t4, s8
	vsetvli	s11, a0, e32, m4, ta, mu
	slli	a0, s8, 2
	add	a0, a2, a0
	vle32.v	v8, (a0)
	blez	t3, .LBB0_7
	li	ra, 0
	add	a6, a1, s8
	mv	s0, s6
	j	.LBB0_11
.LBB0_10:
	addi	ra, ra, 1
	add	s0, s0, s1
	add	a6, a6, s3
	beq	ra, t3, .LBB0_7
.LBB0_11:
	slti	a0, t3, 1
	add	a5, s5, ra
	slti	a7, a5, 0
	slt	a5, a5, t0
	xori	a5, a5, 1
	or	a5, a7, a5
	or	a0, a0, a5
	bnez	a0, .LBB0_10
	li	a5, 0
	mv	t1, a6
	mv	a7, s0
	j	.LBB0_14
.LBB0_13:
	addi	a5, a5, 1
	add	a7, a7, s4
	add	t1, t1, s2
	beq	a5, t3, .LBB0_10
.LBB0_14:
	add	a0, s9, a5
	slti	t2, a0, 0
	slt	a0, a0, t0
	xori	a0, a0, 1
	or	a0, t2, a0
	bnez	a0, .LBB0_13
	blez	s4, .LBB0_13
	mv	a0, t1
	mv	s7, a7
	mv	t2, s4
.LBB0_17:
	vsetvli	zero, s11, e8, m1, ta, mu
	vle8.v	v12, (a0)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	a3, 0(s7)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, a3, v16
	addi	t2, t2, -1
	addi	s7, s7, 1
	add	a0, a0, t4
	bnez	t2, .LBB0_17
	j	.LBB0_13
.LBB0_18:
	lw	a4, 8(sp)
	lw	a0, 0(a4)
	blez	a0, .LBB0_35
	lw	a1, 12(a4)
	li	a2, 0
	lw	t0, 8(a4)
	lw	t1, 24(a4)
	srli	a3, a1, 31
	add	a3, a1, a3
	srai	a3, a3, 1
	neg	t2, a3
	lw	a7, 20(a4)
	mul	t3, t0, t0
	mul	a3, t0, t2
	addi	a4, a0, 1
	mul	a3, a3, a4
	lw	a4, 24(sp)
	add	s3, a4, a3
	mul	t4, a0, t0
	mul	t5, t3, a1
	slti	t6, a1, 1
	j	.LBB0_21
.LBB0_20:
	addi	a2, a2, 1
	lw	s3, 32(sp)
	add	s3, s3, t4
	beq	a2, a0, .LBB0_35
.LBB0_21:
	li	s0, 0
	add	s1, a2, t2
	mul	s2, a2, a0
	sw	s3, 32(sp)
	j	.LBB0_23
.LBB0_22:
	addi	s0, s0, 1
	add	s3, s3, t0
	beq	s0, a0, .LBB0_20
.LBB0_23:
	blez	t0, .LBB0_22
	li	s4, 0
	add	s5, s0, t2
	add	a3, s0, s2
	mul	a3, a3, t0
	lw	a4, 20(sp)
	add	s6, a4, a3
	j	.LBB0_26
.LBB0_25:
	vsetvli	zero, s7, e32, m4, ta, mu
	vmul.vx	v8, v8, a7
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, t1
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	vmax.vx	v8, v8, zero
	add	a3, s6, s4
	add	s4, s7, s4
	vse8.v	v8, (a3)
	bge	s4, t0, .LBB0_22
.LBB0_26:
	sub	a3, t0, s4
	vsetvli	s7, a3, e32, m4, ta, mu
	slli	a3, s4, 2
	lw	a4, 40(sp)
	add	a3, a4, a3
	vle32.v	v8, (a3)
	blez	a1, .LBB0_25
	li	a5, 0
	lw	a3, 36(sp)
	add	a6, a3, s4
	mv	s9, s3
	j	.LBB0_29
.LBB0_28:
	addi	a5, a5, 1
	add	s9, s9, t4
	add	a6, a6, t5
	beq	a5, a1, .LBB0_25
.LBB0_29:
	add	a3, s1, a5
	slti	a4, a3, 0
	slt	a3, a3, a0
	xori	a3, a3, 1
	or	a3, a4, a3
	or	a3, t6, a3
	bnez	a3, .LBB0_28
	li	s10, 0
	mv	s8, a6
	mv	ra, s9
	j	.LBB0_32
.LBB0_31:
	addi	s10, s10, 1
	add	ra, ra, t0
	add	s8, s8, t3
	beq	s10, a1, .LBB0_28
.LBB0_32:
	add	a3, s5, s10
	slti	a4, a3, 0
	slt	a3, a3, a0
	xori	a3, a3, 1
	or	a3, a4, a3
	bnez	a3, .LBB0_31
	li	a3, 0
	mv	s11, s8
.LBB0_34:
	vsetvli	zero, s7, e8, m1, ta, mu
	vle8.v	v12, (s11)
	vsetvli	zero, zero, e32, m4, ta, mu
	add	a4, ra, a3
	lb	a4, 0(a4)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, a4, v16
	addi	a3, a3, 1
	add	s11, s11, t0
	bne	t0, a3, .LBB0_34
	j	.LBB0_31
.LBB0_35:
	lw	ra, 92(sp)
	lw	s0, 88(sp)
	lw	s1, 84(sp)
	lw	s2, 80(sp)
	lw	s3, 76(sp)
	lw	s4, 72(sp)
	lw	s5, 68(sp)
	lw	s6, 64(sp)
	lw	s7, 60(sp)
	lw	s8, 56(sp)
	lw	s9, 52(sp)
	lw	s10, 48(sp)
	lw	s11, 44(sp)
	addi	sp, sp, 96
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
