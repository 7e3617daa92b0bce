	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"matmul.c"
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
	sw	s6, 4(sp)
	lw	a7, 0(a4)
	blez	a7, .LBB0_15
	li	a5, 0
	j	.LBB0_4
.LBB0_2:
	lw	a7, 0(a4)
.LBB0_3:
	addi	a5, a5, 1
	bge	a5, a7, .LBB0_15
.LBB0_4:
	lw	a6, 4(a4)
	beqz	a6, .LBB0_3
	lw	a7, 12(a4)
	li	t0, 0
	mul	t2, a6, a5
	lw	t1, 8(a4)
	mul	t2, a7, t2
	add	t2, a3, t2
	lw	t3, 16(a4)
	lw	t4, 20(a4)
	mul	t5, a6, t1
	mul	t5, t5, a5
	add	t5, a0, t5
	mul	t6, t1, a7
	mul	t6, t6, a5
	add	t6, a1, t6
	j	.LBB0_7
.LBB0_6:
	addi	t0, t0, 1
	add	t5, t5, t1
	beq	t0, a6, .LBB0_2
.LBB0_7:
	beqz	a7, .LBB0_6
	li	s0, 0
	mul	s1, t0, a7
	add	s1, t2, s1
	j	.LBB0_10
.LBB0_9:
	vsetvli	zero, zero, e32, m4, ta, mu
	vmul.vx	v8, v8, t3
	vssra.vi	v8, v8, 16
	vadd.vx	v8, v8, t4
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v12, v8, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v8, v12, 0
	add	s3, s1, s0
	add	s0, s2, s0
	vse8.v	v8, (s3)
	bgeu	s0, a7, .LBB0_6
.LBB0_10:
	sub	s2, a7, s0
	vsetvli	s2, s2, e32, m4, ta, mu
	beqz	a2, .LBB0_12
	slli	s3, s0, 2
	add	s3, a2, s3
	vle32.v	v8, (s3)
	bnez	t1, .LBB0_13
	j	.LBB0_9
.LBB0_12:
	vmv.v.i	v8, 0
	beqz	t1, .LBB0_9
.LBB0_13:
	add	s3, t6, s0
	mv	s4, t5
	mv	s5, t1
.LBB0_14:
	vsetvli	zero, zero, e8, m1, ta, mu
	vle8.v	v12, (s3)
	vsetvli	zero, zero, e32, m4, ta, mu
	lb	s6, 0(s4)
	vsext.vf4	v16, v12
	vsetvli	zero, zero, e32, m4, tu, mu
	vmacc.vx	v8, s6, v16
	addi	s5, s5, -1
	addi	s4, s4, 1
	add	s3, s3, a7
	bnez	s5, .LBB0_14
	j	.LBB0_9
.LBB0_15:
	lw	s0, 28(sp)
	lw	s1, 24(sp)
	lw	s2, 20(sp)
	lw	s3, 16(sp)
	lw	s4, 12(sp)
	lw	s5, 8(sp)
	lw	s6, 4(sp)
	addi	sp, sp, 32
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
