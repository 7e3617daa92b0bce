	.file	"rsort.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.align	2
	.type	pass, @function
pass:
	addi	sp,sp,-1024
	mv	a5,sp
	addi	a6,sp,1024
	mv	a4,a5
.L2:
	sw	zero,0(a4)
	addi	a4,a4,4
	bne	a4,a6,.L2
	ble	a2,zero,.L3
	slli	t3,a2,2
	mv	a7,a0
	add	t3,t3,a0
.L4:
	lw	a4,0(a7)
	addi	a7,a7,4
	srl	a4,a4,a3
	andi	a4,a4,255
	slli	a4,a4,2
	addi	a4,a4,1024
	add	a4,a4,sp
	lw	t1,-1024(a4)
	addi	t1,t1,1
	sw	t1,-1024(a4)
	bne	t3,a7,.L4
.L3:
	li	a4,0
.L5:
	lw	a7,0(a5)
	sw	a4,0(a5)
	addi	a5,a5,4
	add	a4,a4,a7
	bne	a5,a6,.L5
	ble	a2,zero,.L1
	slli	a2,a2,2
	add	a7,a0,a2
.L7:
	lw	a6,0(a0)
	addi	a0,a0,4
	srl	a5,a6,a3
	andi	a5,a5,255
	slli	a5,a5,2
	addi	a5,a5,1024
	add	a5,a5,sp
	lw	a4,-1024(a5)
	slli	a2,a4,2
	add	a2,a1,a2
	addi	a4,a4,1
	sw	a4,-1024(a5)
	sw	a6,0(a2)
	bne	a7,a0,.L7
.L1:
	addi	sp,sp,1024
	jr	ra
	.size	pass, .-pass
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	addi	sp,sp,-16
	sw	s0,8(sp)
	sw	s1,4(sp)
	mv	s0,a2
	mv	s1,a3
	sw	s2,0(sp)
	mv	a2,s1
	mv	s2,a1
	li	a3,0
	mv	a1,s0
	sw	ra,12(sp)
	call	pass
	mv	a2,s1
	mv	a1,s2
	mv	a0,s0
	li	a3,8
	call	pass
	mv	a2,s1
	mv	a1,s0
	mv	a0,s2
	li	a3,16
	call	pass
	mv	a0,s0
	lw	s0,8(sp)
	lw	ra,12(sp)
	mv	a2,s1
	mv	a1,s2
	lw	s1,4(sp)
	lw	s2,0(sp)
	li	a3,24
	addi	sp,sp,16
	tail	pass
	.size	kernel, .-kernel
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
