	.file	"dotprod.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	ble	a3,zero,.L4
	slli	a3,a3,2
	add	a6,a0,a3
	li	a4,0
.L3:
	lw	a5,0(a0)
	lw	a3,0(a1)
	addi	a0,a0,4
	addi	a1,a1,4
	mul	a5,a5,a3
	add	a4,a4,a5
	bne	a6,a0,.L3
	sw	a4,0(a2)
	ret
.L4:
	li	a4,0
	sw	a4,0(a2)
	ret
	.size	kernel, .-kernel
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
