	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"depthwise_conv.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	addi	sp, sp, -64
	sw	ra, 60(sp)
	sw	s0, 56(sp)
	sw	s1, 52(sp)
	sw	s2, 48(sp)
	sw	s3, 44(sp)
	sw	s4, 40(sp)
	sw	s5, 36(sp)
	sw	s6, 32(sp)
	sw	s7, 28(sp)
	sw	s8, 24(sp)
	sw	s9, 20(sp)
	sw	s10, 16(sp)
	sw	s11, 12(sp)
	lw	a5, 0(a4)
	blez	a5, .LBB0_16
	lw	a6, 8(a4)
	li	a7, 0
	lw	t0, 4(a4)
	srli	t1, a6, 31
	add	t1, a6, t1
	srai	t1, t1, 1
	neg	t1, t1
	mul	t2, a6, t0
	sw	t1, 4(sp)
	mul	t3, t0, t1
	addi	t4, a5, 1
	mul	t3, t3, t4
	add	s3, a0, t3
	mul	t3, a5, t0
	slti	t4, a6, 1
	li	t5, -1
	j	.LBB0_3
.LBB0_2:
	addi	a7, a7, 1
	lw	s3, 8(sp)
	add	s3, s3, t3
	beq	a7, a5, .LBB0_16
.LBB0_3:
	li	t6, 0
	lw	s2, 4(sp)
	add	s0, a7, s2
	mul	s1, a7, a5
	sw	s3, 8(sp)
	j	.LBB0_5
.LBB0_4:
	addi	t6, t6, 1
	add	s3, s3, t0
	addi	s2, s2, 1
	beq	t6, a5, .LBB0_2
.LBB0_5:
	blez	t0, .LBB0_4
	li	s4, 0
	add	s5, t6, s1
	mul	s5, s5, t0
	add	s5, a3, s5
	j	.LBB0_8
.LBB0_7:
	lw	s7, 12(a4)
	add	s8, s5, s4
	lw	s9, 16(a4)
	vsetvli	zero, s6, e32, m4, ta, mu
	vmul.vx	v8, v8, s7
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, s9
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	add	s4, s6, s4
	vse8.v	v8, (s8)
	bge	s4, t0, .LBB0_4
.LBB0_8:
	sub	s6, t0, s4
	vsetvli	s6, s6, e32, m4, ta, mu
	slli	s7, s4, 2
	add	s7, a2, s7
	vle32.v	v8, (s7)
	blez	a6, .LBB0_7
	li	s7, 0
	mv	s8, s3
	mv	s9, a1
	j	.LBB0_11
.LBB0_10:
	addi	s7, s7, 1
	add	s9, s9, t2
	add	s8, s8, t3
	beq	s7, a6, .LBB0_7
.LBB0_11:
	add	s10, s0, s7
	slti	s11, s10, 0
	slt	s10, s10, a5
	xori	s10, s10, 1
	or	s10, s11, s10
	or	s10, s10, t4
	bnez	s10, .LBB0_10
	mv	s10, s2
	mv	s11, a6
	mv	ra, s4
	j	.LBB0_14
.LBB0_13:
	add	ra, ra, t0
	addi	s11, s11, -1
	addi	s10, s10, 1
	beqz	s11, .LBB0_10
.LBB0_14:
	slt	t1, t5, s10
	slt	a0, s10, a5
	and	a0, t1, a0
	beqz	a0, .LBB0_13
	add	a0, s8, ra
	vsetvli	zero, s6, e8, m1, ta, mu
	vle8.v	v12, (a0)
	add	a0, s9, ra
	vle8.v	v13, (a0)
	vwmul.vv	v14, v12, v13
	vsetvli	zero, zero, e16, m2, ta, mu
	vwadd.wv	v8, v8, v14
	j	.LBB0_13
.LBB0_16:
	lw	ra, 60(sp)
	lw	s0, 56(sp)
	lw	s1, 52(sp)
	lw	s2, 48(sp)
	lw	s3, 44(sp)
	lw	s4, 40(sp)
	lw	s5, 36(sp)
	lw	s6, 32(sp)
	lw	s7, 28(sp)
	lw	s8, 24(sp)
	lw	s9, 20(sp)
	lw	s10, 16(sp)
	lw	s11, 12(sp)
	addi	sp, sp, 64
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
