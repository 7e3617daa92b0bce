	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"layernorm.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	beqz	a2, .LBB0_42
	li	a4, 0
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
	vsetivli	zero, 1, e32, m1, ta, mu
	vmv.s.x	v8, zero
	lui	a6, 4
	lui	a7, 2
	lui	t0, 1
	j	.LBB0_3
.LBB0_2:
	addi	a4, a4, 1
	add	a0, a0, a3
	add	a1, a1, a3
	beq	a4, a2, .LBB0_42
.LBB0_3:
	beqz	a3, .LBB0_8
	li	t2, 0
	li	t1, 0
.LBB0_5:
	sub	t3, a3, t2
	vsetvli	t3, t3, e8, m1, ta, mu
	add	t4, a0, t2
	vle8.v	v9, (t4)
	vsetvli	zero, t3, e32, m4, ta, mu
	vsext.vf4	v12, v9
	vredsum.vs	v9, v12, v8
	vmv.x.s	t4, v9
	add	t2, t3, t2
	add	t1, t4, t1
	bltu	t2, a3, .LBB0_5
	li	t2, 0
	li	t3, 0
	sra	t1, t1, a5
.LBB0_7:
	sub	t4, a3, t3
	vsetvli	t4, t4, e8, m1, ta, mu
	add	t5, a0, t3
	vle8.v	v9, (t5)
	vsetvli	zero, t4, e32, m4, ta, mu
	vsext.vf4	v12, v9
	vsub.vx	v12, v12, t1
	vmul.vv	v12, v12, v12
	vredsum.vs	v9, v12, v8
	vmv.x.s	t5, v9
	add	t3, t4, t3
	add	t2, t5, t2
	bltu	t3, a3, .LBB0_7
	j	.LBB0_9
.LBB0_8:
	li	t1, 0
	li	t2, 0
.LBB0_9:
	sra	t2, t2, a5
	srli	t3, t2, 30
	snez	t3, t3
	slli	t3, t3, 15
	or	t4, t3, a6
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_11
	mv	t3, t4
.LBB0_11:
	or	t4, t3, a7
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_13
	mv	t3, t4
.LBB0_13:
	or	t4, t3, t0
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_15
	mv	t3, t4
.LBB0_15:
	addi	t4, t3, 1024
	addi	t4, t4, 1024
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_17
	mv	t3, t4
.LBB0_17:
	addi	t4, t3, 1024
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_19
	mv	t3, t4
.LBB0_19:
	addi	t4, t3, 512
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_21
	mv	t3, t4
.LBB0_21:
	addi	t4, t3, 256
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_23
	mv	t3, t4
.LBB0_23:
	addi	t4, t3, 128
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_25
	mv	t3, t4
.LBB0_25:
	addi	t4, t3, 64
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_27
	mv	t3, t4
.LBB0_27:
	addi	t4, t3, 32
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_29
	mv	t3, t4
.LBB0_29:
	addi	t4, t3, 16
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_31
	mv	t3, t4
.LBB0_31:
	addi	t4, t3, 8
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_33
	mv	t3, t4
.LBB0_33:
	addi	t4, t3, 4
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_35
	mv	t3, t4
.LBB0_35:
	addi	t4, t3, 2
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_37
	mv	t3, t4
.LBB0_37:
	addi	t4, t3, 1
	mul	t5, t4, t4
	bltu	t2, t5, .LBB0_39
	mv	t3, t4
.LBB0_39:
	beqz	a3, .LBB0_2
	li	t2, 0
	addi	t3, t3, 1
.LBB0_41:
	sub	t4, a3, t2
	vsetvli	t4, t4, e8, m1, ta, mu
	add	t5, a0, t2
	vle8.v	v9, (t5)
	vsetvli	zero, t4, e32, m4, ta, mu
	vsext.vf4	v12, v9
	vsub.vx	v12, v12, t1
	vsll.vi	v12, v12, 5
	vdiv.vx	v12, v12, t3
	add	t5, a1, t2
	vsetvli	zero, zero, e16, m2, ta, mu
	vnclip.wi	v10, v12, 0
	vsetvli	zero, zero, e8, m1, ta, mu
	vnclip.wi	v9, v10, 0
	add	t2, t4, t2
	vse8.v	v9, (t5)
	bltu	t2, a3, .LBB0_41
	j	.LBB0_2
.LBB0_42:
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
