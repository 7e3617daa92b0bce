	.file	"copy.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	ble	a2,zero,.L1
	slli	a2,a2,2
	add	a4,a0,a2
.L3:
	lw	a5,0(a0)
	addi	a0,a0,4
	addi	a1,a1,4
	sw	a5,-4(a1)
	bne	a0,a4,.L3
.L1:
	ret
	.size	kernel, .-kernel
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
