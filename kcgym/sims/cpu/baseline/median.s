	.file	"median.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	lw	a5,0(a0)
	sw	a5,0(a1)
	li	a5,2
	ble	a2,a5,.L2
	slli	t1,a2,2
	addi	t1,t1,-8
	mv	a4,a0
	addi	a6,a1,4
	add	t1,t1,a0
.L6:
	lw	a3,0(a4)
	lw	a5,4(a4)
	lw	a7,8(a4)
	mv	t3,a3
	addi	a4,a4,4
	bge	a5,a3,.L3
	mv	a3,a5
	mv	a5,t3
.L3:
	bge	a7,a5,.L4
	mv	a5,a7
	bge	a7,a3,.L4
	mv	a5,a3
.L4:
	sw	a5,0(a6)
	addi	a6,a6,4
	bne	t1,a4,.L6
.L2:
	slli	a2,a2,2
	addi	a2,a2,-4
	add	a0,a0,a2
	lw	a5,0(a0)
	add	a1,a1,a2
	sw	a5,0(a1)
	ret
	.size	kernel, .-kernel
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
