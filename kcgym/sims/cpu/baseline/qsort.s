	.file	"qsort.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	addi	sp,sp,-256
	ble	a2,zero,.L5
	mv	a5,a0
	slli	a0,a2,2
	mv	a4,a1
	add	a0,a5,a0
.L4:
	lw	a3,0(a5)
	addi	a5,a5,4
	addi	a4,a4,4
	sw	a3,-4(a4)
	bne	a5,a0,.L4
.L5:
	addi	t4,a2,-1
	li	a0,0
	li	t5,0
	li	t6,7
.L3:
	sub	a5,t4,a0
	bgt	a5,t6,.L6
	addi	a5,a0,1
	slli	a7,a5,2
	add	a7,a1,a7
	mv	a6,a0
	blt	t4,a5,.L14
.L13:
	lw	a2,0(a7)
	mv	a5,a6
	mv	a4,a7
	ble	a0,a6,.L10
	j	.L11
.L12:
	sw	a3,0(a4)
	addi	a5,a5,-1
	addi	a4,a4,-4
	bgt	a0,a5,.L11
.L10:
	lw	a3,-4(a4)
	blt	a2,a3,.L12
.L11:
	addi	a5,a5,1
	slli	a5,a5,2
	add	a5,a1,a5
	sw	a2,0(a5)
	addi	a6,a6,1
	addi	a7,a7,4
	bne	t4,a6,.L13
.L14:
	bne	t5,zero,.L35
	addi	sp,sp,256
	jr	ra
.L6:
	srai	a5,a5,1
	add	a5,a5,a0
	slli	a5,a5,2
	slli	t3,a0,2
	add	a5,a1,a5
	add	t3,a1,t3
	lw	a4,0(a5)
	lw	a2,0(t3)
	bge	a4,a2,.L16
	sw	a2,0(a5)
	sw	a4,0(t3)
	mv	a2,a4
.L16:
	slli	a4,t4,2
	add	a4,a1,a4
	lw	a3,0(a4)
	bge	a3,a2,.L17
	sw	a2,0(a4)
	sw	a3,0(t3)
	lw	a3,0(a4)
.L17:
	lw	a6,0(a5)
	bgt	a6,a3,.L36
.L18:
	addi	t0,a0,-1
	addi	a3,t4,1
.L19:
	lw	t2,0(t3)
	addi	t0,t0,1
	blt	t2,a6,.L20
	addi	a4,a3,-1
	slli	a5,a4,2
	add	a5,a1,a5
	j	.L21
.L37:
	addi	a4,a4,-1
.L21:
	lw	a2,0(a5)
	mv	a7,a5
	mv	t1,a3
	addi	a5,a5,-4
	mv	a3,a4
	bgt	a2,a6,.L37
	bge	t0,a4,.L22
	sw	a2,0(t3)
	sw	t2,0(a7)
.L20:
	addi	t3,t3,4
	j	.L19
.L22:
	sub	a2,t4,a4
	sub	a3,a4,a0
	addi	a5,t5,1
	addi	a6,t5,2
	bgt	a2,a3,.L23
	slli	a3,t5,2
	addi	a3,a3,256
	slli	a5,a5,2
	add	a3,a3,sp
	addi	a5,a5,256
	sw	a0,-256(a3)
	add	a5,a5,sp
	sw	a4,-256(a5)
	mv	a0,t1
	mv	t5,a6
	j	.L3
.L23:
	slli	a3,t5,2
	addi	a3,a3,256
	slli	a5,a5,2
	add	a3,a3,sp
	addi	a5,a5,256
	sw	t1,-256(a3)
	add	a5,a5,sp
	sw	t4,-256(a5)
	mv	t5,a6
	mv	t4,a4
	j	.L3
.L36:
	sw	a6,0(a4)
	sw	a3,0(a5)
	mv	a6,a3
	j	.L18
.L35:
	addi	a5,t5,-1
	addi	t5,t5,-2
	slli	a5,a5,2
	slli	a4,t5,2
	addi	a5,a5,256
	addi	a4,a4,256
	add	a5,a5,sp
	add	a4,a4,sp
	lw	t4,-256(a5)
	lw	a0,-256(a4)
	j	.L3
	.size	kernel, .-kernel
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
