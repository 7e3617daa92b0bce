	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"swiglu.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	addi	sp, sp, -48
	sw	s0, 44(sp)
	sw	s1, 40(sp)
	sw	s2, 36(sp)
	sw	s3, 32(sp)
	sw	s4, 28(sp)
	sw	s5, 24(sp)
	sw	s6, 20(sp)
	sw	s7, 16(sp)
	sw	s8, 12(sp)
	sw	s9, 8(sp)
	lw	t3, 0(a7)
	lw	t4, 8(a7)
	mul	t1, t4, t3
	slli	t0, t1, 1
	add	t0, a6, t0
	beqz	t3, .LBB0_24
	lw	t5, 4(a7)
	lw	t6, 12(a7)
	lw	s0, 24(a7)
	li	s1, 0
	add	t2, a6, t1
	mv	s2, a0
	j	.LBB0_3
.LBB0_2:
	addi	s1, s1, 1
	add	s2, s2, t5
	beq	s1, t3, .LBB0_9
.LBB0_3:
	beqz	t4, .LBB0_2
	li	s3, 0
	mul	s4, s1, t4
	add	s4, a6, s4
	j	.LBB0_6
.LBB0_5:
	vsetvli	zero, s5, e32, m4, ta, mu
	vmul.vx	v8, v8, t6
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, s0
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	add	s6, s4, s3
	add	s3, s5, s3
	vse8.v	v8, (s6)
	bgeu	s3, t4, .LBB0_2
.LBB0_6:
	sub	s5, t4, s3
	vsetvli	s5, s5, e32, m4, ta, mu
	vmv.v.i	v8, 0
	beqz	t5, .LBB0_5
	add	s6, a1, s3
	mv	s7, s2
	mv	s8, t5
.LBB0_8:
	vsetvli	zero, s5, e8, m1, ta, mu
	vle8.v	v12, (s6)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	s9, 0(s7)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, s9, v16
	addi	s8, s8, -1
	addi	s7, s7, 1
	add	s6, s6, t4
	bnez	s8, .LBB0_8
	j	.LBB0_5
.LBB0_9:
	lw	a1, 0(a7)
	beqz	a1, .LBB0_18
	lw	t3, 4(a7)
	lw	t4, 8(a7)
	lw	t5, 24(a7)
	lw	t6, 16(a7)
	li	s0, 0
	j	.LBB0_12
.LBB0_11:
	addi	s0, s0, 1
	add	a0, a0, t3
	beq	s0, a1, .LBB0_18
.LBB0_12:
	beqz	t4, .LBB0_11
	li	s1, 0
	mul	s2, s0, t4
	add	s2, t2, s2
	j	.LBB0_15
.LBB0_14:
	vsetvli	zero, s3, e32, m4, ta, mu
	vmul.vx	v8, v8, t6
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, t5
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	add	s4, s2, s1
	add	s1, s3, s1
	vse8.v	v8, (s4)
	bgeu	s1, t4, .LBB0_11
.LBB0_15:
	sub	s3, t4, s1
	vsetvli	s3, s3, e32, m4, ta, mu
	vmv.v.i	v8, 0
	beqz	t3, .LBB0_14
	add	s4, a2, s1
	mv	s5, a0
	mv	s6, t3
.LBB0_17:
	vsetvli	zero, s3, e8, m1, ta, mu
	vle8.v	v12, (s4)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	s7, 0(s5)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, s7, v16
	addi	s6, s6, -1
	addi	s5, s5, 1
	add	s4, s4, t4
	bnez	s6, .LBB0_17
	j	.LBB0_14
.LBB0_18:
	beqz	t1, .LBB0_24
	li	a0, -128
	mv	a1, a6
	mv	a2, a6
	mv	t3, t1
.LBB0_20:
	vsetvli	t4, t3, e8, m1, ta, mu
	vle8.v	v8, (a1)
	vxor.vx	v8, v8, a0
	vluxei8.v	v8, (a4), v8
	vse8.v	v8, (a2)
	add	a1, a1, t4
	sub	t3, t3, t4
	add	a2, a2, t4
	bnez	t3, .LBB0_20
	beqz	t1, .LBB0_24
	li	a0, 0
.LBB0_23:
	sub	a1, t1, a0
	vsetvli	a1, a1, e8, m1, ta, mu
	add	a2, a6, a0
	vle8.v	v8, (a2)
	add	a2, t2, a0
	vle8.v	v9, (a2)
	vwmul.vv	v10, v8, v9
	add	a2, t0, a0
	vsetvli	zero, a1, e16, m2, ta, mu
	vssra.vi	v8, v10, 6
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v10, v8, 0
	add	a0, a1, a0
	vse8.v	v10, (a2)
	bltu	a0, t1, .LBB0_23
.LBB0_24:
	lw	a0, 0(a7)
	beqz	a0, .LBB0_33
	lw	a1, 8(a7)
	lw	a2, 4(a7)
	lw	a4, 20(a7)
	lw	a6, 24(a7)
	li	a7, 0
	j	.LBB0_27
.LBB0_26:
	addi	a7, a7, 1
	add	t0, t0, a1
	beq	a7, a0, .LBB0_33
.LBB0_27:
	beqz	a2, .LBB0_26
	li	t1, 0
	mul	t2, a7, a2
	add	t2, a5, t2
	j	.LBB0_30
.LBB0_29:
	vsetvli	zero, t3, e32, m4, ta, mu
	vmul.vx	v8, v8, a4
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, a6
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	add	t4, t2, t1
	add	t1, t3, t1
	vse8.v	v8, (t4)
	bgeu	t1, a2, .LBB0_26
.LBB0_30:
	sub	t3, a2, t1
	vsetvli	t3, t3, e32, m4, ta, mu
	vmv.v.i	v8, 0
	beqz	a1, .LBB0_29
	add	t4, a3, t1
	mv	t5, t0
	mv	t6, a1
.LBB0_32:
	vsetvli	zero, t3, e8, m1, ta, mu
	vle8.v	v12, (t4)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	s0, 0(t5)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, s0, v16
	addi	t6, t6, -1
	addi	t5, t5, 1
	add	t4, t4, a2
	bnez	t6, .LBB0_32
	j	.LBB0_29
.LBB0_33:
	lw	s0, 44(sp)
	lw	s1, 40(sp)
	lw	s2, 36(sp)
	lw	s3, 32(sp)
	lw	s4, 28(sp)
	lw	s5, 24(sp)
	lw	s6, 20(sp)
	lw	s7, 16(sp)
	lw	s8, 12(sp)
	lw	s9, 8(sp)
	addi	sp, sp, 48
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
