	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"conv2d.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	addi	sp, sp, -80
	sw	ra, 76(sp)
	sw	s0, 72(sp)
	sw	s1, 68(sp)
	sw	s2, 64(sp)
	sw	s3, 60(sp)
	sw	s4, 56(sp)
	sw	s5, 52(sp)
	sw	s6, 48(sp)
	sw	s7, 44(sp)
	sw	s8, 40(sp)
	sw	s9, 36(sp)
	sw	s10, 32(sp)
	sw	s11, 28(sp)
	lw	a5, 0(a4)
	sw	a3, 12(sp)
	blez	a5, .LBB0_18
	li	a7, 0
	lw	s3, 4(a4)
	lw	t0, 12(a4)
	lw	t1, 8(a4)
	lw	t2, 16(a4)
	lw	a4, 20(a4)
	srli	a3, t0, 31
	add	a3, t0, a3
	srai	a3, a3, 1
	neg	a3, a3
	sw	a3, 20(sp)
	mul	a3, s3, a3
	addi	a6, a5, 1
	mul	a3, a3, a6
	add	a3, a0, a3
	mul	t4, a5, s3
	mul	t5, t1, s3
	mul	t6, t5, t0
	slti	s0, t0, 1
	j	.LBB0_3
.LBB0_2:
	lw	a7, 8(sp)
	addi	a7, a7, 1
	lw	a3, 4(sp)
	add	a3, a3, t4
	beq	a7, a5, .LBB0_18
.LBB0_3:
	sw	zero, 24(sp)
	lw	a0, 20(sp)
	add	s2, a7, a0
	sw	a7, 8(sp)
	mul	a0, a7, a5
	sw	a0, 16(sp)
	sw	a3, 4(sp)
	j	.LBB0_5
.LBB0_4:
	lw	a0, 24(sp)
	addi	a0, a0, 1
	add	a3, a3, s3
	sw	a0, 24(sp)
	beq	a0, a5, .LBB0_2
.LBB0_5:
	blez	t1, .LBB0_4
	li	s5, 0
	lw	a0, 20(sp)
	lw	a6, 24(sp)
	add	s6, a6, a0
	lw	a0, 16(sp)
	add	a0, a6, a0
	mul	a0, a0, t1
	lw	a6, 12(sp)
	add	s7, a6, a0
	j	.LBB0_8
.LBB0_7:
	vsetvli	zero, s8, e32, m4, ta, mu
	vmul.vx	v8, v8, t2
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, a4
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	add	a0, s7, s5
	add	s5, s8, s5
	vse8.v	v8, (a0)
	bge	s5, t1, .LBB0_4
.LBB0_8:
	sub	a0, t1, s5
	vsetvli	s8, a0, e32, m4, ta, mu
	slli	a0, s5, 2
	add	a0, a2, a0
	vle32.v	v8, (a0)
	blez	t0, .LBB0_7
	li	s9, 0
	add	t3, a1, s5
	mv	a6, a3
	j	.LBB0_11
.LBB0_10:
	addi	s9, s9, 1
	add	a6, a6, t4
	add	t3, t3, t6
	beq	s9, t0, .LBB0_7
.LBB0_11:
	add	a0, s2, s9
	slti	a7, a0, 0
	slt	a0, a0, a5
	xori	a0, a0, 1
	or	a0, a7, a0
	or	a0, s0, a0
	bnez	a0, .LBB0_10
	li	ra, 0
	mv	a0, t3
	mv	s4, a6
	j	.LBB0_14
.LBB0_13:
	addi	ra, ra, 1
	add	s4, s4, s3
	add	a0, a0, t5
	beq	ra, t0, .LBB0_10
.LBB0_14:
	add	a7, s6, ra
	slti	s10, a7, 0
	slt	a7, a7, a5
	xori	a7, a7, 1
	or	a7, s10, a7
	bnez	a7, .LBB0_13
	blez	s3, .LBB0_13
	mv	s10, a0
	mv	s11, s4
	mv	a7, s3
.LBB0_17:
	vsetvli	zero, s8, e8, m1, ta, mu
	vle8.v	v12, (s10)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	s1, 0(s11)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, s1, v16
	addi	a7, a7, -1
	addi	s11, s11, 1
	add	s10, s10, t1
	bnez	a7, .LBB0_17
	j	.LBB0_13
.LBB0_18:
	lw	ra, 76(sp)
	lw	s0, 72(sp)
	lw	s1, 68(sp)
	lw	s2, 64(sp)
	lw	s3, 60(sp)
	lw	s4, 56(sp)
	lw	s5, 52(sp)
	lw	s6, 48(sp)
	lw	s7, 44(sp)
	lw	s8, 40(sp)
	lw	s9, 36(sp)
	lw	s10, 32(sp)
	lw	s11, 28(sp)
	addi	sp, sp, 80
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
