	.file	"dhrystone.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.section	.rodata.str1.4,"aMS",@progbits,1
	.align	2
.LC0:
	.string	"DHRYSTONE PROGRAM, SOME STRING"
	.align	2
.LC1:
	.string	"DHRYSTONE PROGRAM, 1'ST STRING"
	.align	2
.LC2:
	.string	"DHRYSTONE PROGRAM, 2'ND STRING"
	.text
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	addi	sp,sp,-224
	lui	a5,%hi(arr_1_glob)
	sw	s2,212(sp)
	sw	a2,%lo(arr_1_glob)(a5)
	mv	s2,a3
	lui	a5,%hi(arr_2_glob)
	sw	s3,208(sp)
	mv	t4,a1
	sw	s2,%lo(arr_2_glob)(a5)
	mv	a1,a4
	sw	s0,220(sp)
	sw	s1,216(sp)
	sw	s4,204(sp)
	sw	s5,200(sp)
	sw	s6,196(sp)
	sw	s7,192(sp)
	sw	s8,188(sp)
	sw	s9,184(sp)
	sw	s10,180(sp)
	sw	s11,176(sp)
	mv	s3,a2
	mv	a3,a0
	mv	a5,a2
	addi	a4,a2,200
.L2:
	sw	zero,0(a5)
	addi	a5,a5,4
	bne	a4,a5,.L2
	li	a2,8192
	addi	a2,a2,2008
	addi	a4,s2,200
	add	a2,s2,a2
.L3:
	addi	a5,a4,-200
.L4:
	sw	zero,0(a5)
	addi	a5,a5,4
	bne	a4,a5,.L4
	addi	a4,a4,200
	bne	a2,a4,.L3
	lui	a5,%hi(int_glob)
	sw	zero,%lo(int_glob)(a5)
	lui	a5,%hi(bool_glob)
	sw	zero,%lo(bool_glob)(a5)
	lui	a5,%hi(ch_1_glob)
	sb	zero,%lo(ch_1_glob)(a5)
	lui	a5,%hi(ch_2_glob)
	addi	a4,sp,80
	sb	zero,%lo(ch_2_glob)(a5)
	lui	a5,%hi(ptr_glob)
	sw	a4,%lo(ptr_glob)(a5)
	addi	a5,sp,128
	sw	a5,80(sp)
	li	a5,2
	sw	a5,88(sp)
	li	a5,40
	sw	a5,92(sp)
	lui	a5,%hi(.LC0)
	sw	zero,84(sp)
	addi	a5,a5,%lo(.LC0)
	addi	a4,sp,96
.L6:
	lbu	a2,0(a5)
	addi	a4,a4,1
	addi	a5,a5,1
	sb	a2,-1(a4)
	bne	a2,zero,.L6
	lui	a5,%hi(.LC1)
	sw	zero,128(sp)
	sw	zero,132(sp)
	sw	zero,136(sp)
	sw	zero,140(sp)
	sb	zero,144(sp)
	addi	a5,a5,%lo(.LC1)
	addi	a4,sp,16
.L7:
	lbu	a7,0(a5)
	addi	a4,a4,1
	addi	a5,a5,1
	sb	a7,-1(a4)
	bne	a7,zero,.L7
	li	a5,10
	sb	zero,48(sp)
	sw	a5,1628(s2)
	ble	a1,zero,.L24
	lbu	s4,16(sp)
	lbu	a6,18(sp)
	slli	a1,a1,3
	lui	s5,%hi(.LC2)
	add	t2,a3,a1
	li	t0,0
	addi	s5,s5,%lo(.LC2)
	li	a1,65
	li	s10,200
	li	s9,4096
	li	s8,5
	li	s7,17
	sw	t4,12(sp)
.L21:
	lw	s0,0(a3)
	lw	t5,4(a3)
	mv	a4,s5
	addi	a5,sp,48
.L9:
	lbu	a2,0(a4)
	addi	a5,a5,1
	addi	a4,a4,1
	sb	a2,-1(a5)
	bne	a2,zero,.L9
	lbu	a5,51(sp)
	li	a4,65
.L10:
	beq	a6,a5,.L25
	lbu	a7,48(sp)
	mv	s11,s4
	addi	a2,sp,48
	addi	a0,sp,16
	bne	s4,zero,.L11
	j	.L48
.L13:
	lbu	s11,0(a0)
	beq	s11,zero,.L49
	mv	a2,t1
.L11:
	lbu	a5,0(a2)
	addi	a0,a0,1
	addi	t1,a2,1
	beq	a5,s11,.L13
.L12:
	bge	s0,t5,.L14
	addi	t0,t5,1
	add	t0,t0,t5
	mv	s0,t5
.L14:
	addi	t4,s0,5
	mul	a0,t4,s10
	slli	t6,s0,2
	slli	t1,t4,2
	add	t1,s3,t1
	sw	t0,0(t1)
	sw	t0,4(t1)
	sw	t4,120(t1)
	lw	a2,80(sp)
	lw	s6,88(sp)
	add	t3,a0,t6
	add	t3,s2,t3
	lw	s1,16(t3)
	sw	t4,20(t3)
	sw	t4,24(t3)
	addi	s1,s1,1
	sw	s1,16(t3)
	lw	t1,0(t1)
	add	a0,s2,a0
	add	a0,a0,t6
	add	a0,s9,a0
	sw	t1,-76(a0)
	lw	a0,84(sp)
	sw	s6,8(a2)
	addi	t1,a2,16
	sw	a0,4(a2)
	lw	a0,92(sp)
	sw	a2,0(a2)
	sw	a0,12(a2)
	addi	a0,sp,96
.L15:
	lbu	t3,0(a0)
	addi	t1,t1,1
	addi	a0,a0,1
	sb	t3,-1(t1)
	bne	t3,zero,.L15
	lw	a0,80(sp)
	sw	s8,12(a2)
	sw	a0,0(a2)
	sw	s7,92(sp)
	lw	t1,4(a2)
	bne	t1,zero,.L16
	lw	t1,88(sp)
	li	t3,6
	sw	t3,12(a2)
	li	t3,2
	beq	t1,t3,.L28
	beq	t1,zero,.L17
	addi	t1,t1,-4
	snez	t1,t1
	addi	t1,t1,2
.L17:
	sw	a0,0(a2)
	li	a0,18
	sw	t1,8(a2)
	sw	a0,12(a2)
.L20:
	bne	a4,a1,.L20
.L50:
	addi	a3,a3,8
	bne	t2,a3,.L21
	mul	t5,t5,s0
	sgt	a3,s11,a5
	lui	a2,%hi(ch_2_glob)
	li	a5,66
	sb	a5,%lo(ch_2_glob)(a2)
	lui	a5,%hi(ch_1_glob)
	sb	a4,%lo(ch_1_glob)(a5)
	lui	a1,%hi(int_glob)
	lw	t4,12(sp)
	lw	t1,140(sp)
	div	a2,t5,t0
	sub	a5,t5,t0
	slli	a4,a5,3
	sub	a5,a4,a5
	lw	a6,136(sp)
	li	a4,5
	lw	a0,132(sp)
	sw	a4,%lo(int_glob)(a1)
	xori	a3,a3,1
	lui	a4,%hi(bool_glob)
	sw	a3,%lo(bool_glob)(a4)
	li	a1,67
	li	t3,1
	li	t5,66
	li	t6,65
	li	t2,5
	sub	a5,a5,a2
	addi	a4,a2,4
.L8:
	sw	a5,20(t4)
	lw	a5,92(sp)
	sw	a4,16(t4)
	sw	t2,0(t4)
	sw	a5,32(t4)
	lw	a5,88(sp)
	sw	a3,4(t4)
	sw	t6,8(t4)
	sw	a5,36(t4)
	lw	a5,84(sp)
	sw	t5,12(t4)
	sw	t0,24(t4)
	sw	t3,28(t4)
	sw	a5,40(t4)
	sw	t1,44(t4)
	sw	a6,48(t4)
	sw	a0,52(t4)
	li	a4,0
	beq	a7,zero,.L22
	addi	a5,sp,48
.L23:
	addi	a5,a5,1
	add	a4,a4,a7
	lbu	a7,0(a5)
	bne	a7,zero,.L23
.L22:
	lw	s0,220(sp)
	sw	a4,56(t4)
	sw	a1,60(t4)
	lw	s1,216(sp)
	lw	s2,212(sp)
	lw	s3,208(sp)
	lw	s4,204(sp)
	lw	s5,200(sp)
	lw	s6,196(sp)
	lw	s7,192(sp)
	lw	s8,188(sp)
	lw	s9,184(sp)
	lw	s10,180(sp)
	lw	s11,176(sp)
	addi	sp,sp,224
	jr	ra
.L25:
	mv	a4,a6
	j	.L10
.L16:
	lw	t4,0(a0)
	lw	t3,4(a0)
	lw	t1,8(a0)
	lw	a2,12(a0)
	sw	t4,80(sp)
	sw	t3,84(sp)
	sw	a2,92(sp)
	sw	t1,88(sp)
	addi	a2,a0,16
	addi	a0,sp,96
.L19:
	lbu	t1,0(a2)
	addi	a0,a0,1
	addi	a2,a2,1
	sb	t1,-1(a0)
	bne	t1,zero,.L19
	bne	a4,a1,.L20
	j	.L50
.L49:
	lbu	a5,1(a2)
	j	.L12
.L28:
	li	t1,1
	j	.L17
.L48:
	mv	a5,a7
	li	s11,0
	j	.L12
.L24:
	li	a1,0
	li	a0,0
	li	a6,0
	li	t1,0
	li	t3,0
	li	t5,0
	li	t6,0
	li	a3,0
	li	t2,0
	li	a4,0
	li	t0,0
	li	a5,0
	j	.L8
	.size	kernel, .-kernel
	.section	.sbss,"aw",@nobits
	.align	2
	.type	arr_2_glob, @object
	.size	arr_2_glob, 4
arr_2_glob:
	.zero	4
	.type	arr_1_glob, @object
	.size	arr_1_glob, 4
arr_1_glob:
	.zero	4
	.type	ch_2_glob, @object
	.size	ch_2_glob, 1
ch_2_glob:
	.zero	1
	.type	ch_1_glob, @object
	.size	ch_1_glob, 1
ch_1_glob:
	.zero	1
	.zero	2
	.type	bool_glob, @object
	.size	bool_glob, 4
bool_glob:
	.zero	4
	.type	int_glob, @object
	.size	int_glob, 4
int_glob:
	.zero	4
	.type	ptr_glob, @object
	.size	ptr_glob, 4
ptr_glob:
	.zero	4
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
