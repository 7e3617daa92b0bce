	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"rmsnorm.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	beqz	a2, .LBB0_39
	li	a4, 0
	vsetivli	zero, 1, e32, m1, ta, mu
	vmv.s.x	v8, zero
	addi	a5, a3, -1
	not	a6, a3
	and	a5, a6, a5
	srli	a6, a5, 1
	lui	a7, 349525
	addi	a7, a7, 1365
	and	a6, a6, a7
	sub	a5, a5, a6
	lui	a6, 209715
	addi	a6, a6, 819
	and	a7, a5, a6
	srli	a5, a5, 2
	and	a5, a5, a6
	add	a5, a7, a5
	srli	a6, a5, 4
	add	a5, a5, a6
	lui	a6, 61681
	addi	a6, a6, -241
	and	a5, a5, a6
	lui	a6, 4112
	addi	a6, a6, 257
	mul	a5, a5, a6
	srli	a5, a5, 24
	lui	a6, 4
	lui	a7, 2
	lui	t0, 1
	j	.LBB0_3
.LBB0_2:
	addi	a4, a4, 1
	add	a0, a0, a3
	add	a1, a1, a3
	beq	a4, a2, .LBB0_39
.LBB0_3:
	li	t1, 0
	beqz	a3, .LBB0_6
	li	t2, 0
.LBB0_5:
	sub	t3, a3, t2
	vsetvli	t3, t3, e8, m1, ta, mu
	add	t4, a0, t2
	vle8.v	v9, (t4)
	vsetvli	zero, t3, e32, m4, ta, mu
	vsext.vf4	v12, v9
	vadd.vi	v12, v12, 0
	vmul.vv	v12, v12, v12
	vredsum.vs	v9, v12, v8
	vmv.x.s	t4, v9
	add	t2, t3, t2
	add	t1, t4, t1
	bltu	t2, a3, .LBB0_5
.LBB0_6:
	sra	t1, t1, a5
	srli	t2, t1, 30
	snez	t2, t2
	slli	t2, t2, 15
	or	t3, t2, a6
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_8
	mv	t2, t3
.LBB0_8:
	or	t3, t2, a7
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_10
	mv	t2, t3
.LBB0_10:
	or	t3, t2, t0
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_12
	mv	t2, t3
.LBB0_12:
	addi	t3, t2, 1024
	addi	t3, t3, 1024
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_14
	mv	t2, t3
.LBB0_14:
	addi	t3, t2, 1024
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_16
	mv	t2, t3
.LBB0_16:
	addi	t3, t2, 512
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_18
	mv	t2, t3
.LBB0_18:
	addi	t3, t2, 256
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_20
	mv	t2, t3
.LBB0_20:
	addi	t3, t2, 128
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_22
	mv	t2, t3
.LBB0_22:
	addi	t3, t2, 64
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_24
	mv	t2, t3
.LBB0_24:
	addi	t3, t2, 32
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_26
	mv	t2, t3
.LBB0_26:
	addi	t3, t2, 16
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_28
	mv	t2, t3
.LBB0_28:
	addi	t3, t2, 8
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_30
	mv	t2, t3
.LBB0_30:
	addi	t3, t2, 4
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_32
	mv	t2, t3
.LBB0_32:
	addi	t3, t2, 2
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_34
	mv	t2, t3
.LBB0_34:
	addi	t3, t2, 1
	mul	t4, t3, t3
	bltu	t1, t4, .LBB0_36
	mv	t2, t3
.LBB0_36:
	beqz	a3, .LBB0_2
	li	t1, 0
	addi	t2, t2, 1
.LBB0_38:
	sub	t3, a3, t1
	vsetvli	t3, t3, e8, m1, ta, mu
	add	t4, a0, t1
	vle8.v	v9, (t4)
	vsetvli	zero, t3, e32, m4, ta, mu
	vsext.vf4	v12, v9
	vadd.vi	v12, v12, 0
	vsll.vi	v12, v12, 5
	vdiv.vx	v12, v12, t2
	add	t4, a1, t1
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v10, v12, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v9, v10, 0
	add	t1, t3, t1
	vse8.v	v9, (t4)
	bltu	t1, a3, .LBB0_38
	j	.LBB0_2
.LBB0_39:
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
