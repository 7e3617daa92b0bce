	.file	"multiply.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	ble	a3,zero,.L1
	slli	a3,a3,2
	add	a7,a0,a3
.L6:
	lw	a5,0(a1)
	lw	a4,0(a0)
	li	a6,0
	beq	a5,zero,.L3
.L5:
	andi	a3,a5,1
	srli	a5,a5,1
	beq	a3,zero,.L4
	add	a6,a6,a4
.L4:
	slli	a4,a4,1
	bne	a5,zero,.L5
.L3:
	sw	a6,0(a2)
	addi	a0,a0,4
	addi	a1,a1,4
	addi	a2,a2,4
	bne	a0,a7,.L6
.L1:
	ret
	.size	kernel, .-kernel
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
