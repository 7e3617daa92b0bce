	.file	"pmp.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0_zicsr2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
 #APP
	.text
.align 2
pmp_trap:
    addi sp, sp, -16
    sw t0, 0(sp)
    sw t1, 4(sp)
    csrr t0, mepc
    addi t0, t0, 4
    csrw mepc, t0
    li t0, 1
    lui t1, %hi(pmp_faulted)
    sw t0, %lo(pmp_faulted)(t1)
    lw t1, 4(sp)
    lw t0, 0(sp)
    addi sp, sp, 16
    mret

 #NO_APP
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	addi	a3,a3,511
	addi	sp,sp,-16
	andi	t3,a3,-512
	lui	a3,%hi(pmp_trap)
	sw	zero,0(sp)
	sw	zero,4(sp)
	sw	zero,8(sp)
	sw	zero,12(sp)
	addi	a3,a3,%lo(pmp_trap)
 #APP
# 90 "pmp.c" 1
	csrw mtvec, a3
# 0 "" 2
 #NO_APP
	li	a6,0
	bgt	a4,zero,.L20
	li	a7,0
	li	a3,0
.L2:
	li	t1,14
	bgtu	a6,t1,.L3
	lui	t1,%hi(.L5)
	slli	a6,a6,2
	addi	t1,t1,%lo(.L5)
	add	a6,a6,t1
	lw	a6,0(a6)
	jr	a6
	.section	.rodata
	.align	2
	.align	2
.L5:
	.word	.L19
	.word	.L18
	.word	.L17
	.word	.L16
	.word	.L15
	.word	.L14
	.word	.L13
	.word	.L12
	.word	.L11
	.word	.L10
	.word	.L9
	.word	.L8
	.word	.L7
	.word	.L6
	.word	.L4
	.text
.L19:
 #APP
# 42 "pmp.c" 1
	csrw pmpaddr0, a3
# 0 "" 2
 #NO_APP
	lw	a3,0(sp)
	li	a6,1
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,0(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L18:
 #APP
# 43 "pmp.c" 1
	csrw pmpaddr1, a3
# 0 "" 2
 #NO_APP
	lw	a3,0(sp)
	li	a6,2
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,0(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L17:
 #APP
# 44 "pmp.c" 1
	csrw pmpaddr2, a3
# 0 "" 2
 #NO_APP
	lw	a3,0(sp)
	li	a6,3
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,0(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L16:
 #APP
# 45 "pmp.c" 1
	csrw pmpaddr3, a3
# 0 "" 2
 #NO_APP
	lw	a3,0(sp)
	li	a6,4
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,0(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L15:
 #APP
# 46 "pmp.c" 1
	csrw pmpaddr4, a3
# 0 "" 2
 #NO_APP
	lw	a3,4(sp)
	li	a6,5
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,4(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L14:
 #APP
# 47 "pmp.c" 1
	csrw pmpaddr5, a3
# 0 "" 2
 #NO_APP
	lw	a3,4(sp)
	li	a6,6
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,4(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L13:
 #APP
# 48 "pmp.c" 1
	csrw pmpaddr6, a3
# 0 "" 2
 #NO_APP
	lw	a3,4(sp)
	li	a6,7
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,4(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L12:
 #APP
# 49 "pmp.c" 1
	csrw pmpaddr7, a3
# 0 "" 2
 #NO_APP
	lw	a3,4(sp)
	li	a6,8
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,4(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L11:
 #APP
# 50 "pmp.c" 1
	csrw pmpaddr8, a3
# 0 "" 2
 #NO_APP
	lw	a3,8(sp)
	li	a6,9
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,8(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L10:
 #APP
# 51 "pmp.c" 1
	csrw pmpaddr9, a3
# 0 "" 2
 #NO_APP
	lw	a3,8(sp)
	li	a6,10
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,8(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L9:
 #APP
# 52 "pmp.c" 1
	csrw pmpaddr10, a3
# 0 "" 2
 #NO_APP
	lw	a3,8(sp)
	li	a6,11
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,8(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L8:
 #APP
# 53 "pmp.c" 1
	csrw pmpaddr11, a3
# 0 "" 2
 #NO_APP
	lw	a3,8(sp)
	li	a6,12
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,8(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L7:
 #APP
# 54 "pmp.c" 1
	csrw pmpaddr12, a3
# 0 "" 2
 #NO_APP
	lw	a3,12(sp)
	li	a6,13
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,12(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L6:
 #APP
# 55 "pmp.c" 1
	csrw pmpaddr13, a3
# 0 "" 2
 #NO_APP
	lw	a3,12(sp)
	li	a6,14
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,12(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L4:
 #APP
# 56 "pmp.c" 1
	csrw pmpaddr14, a3
# 0 "" 2
 #NO_APP
	lw	a3,12(sp)
	li	a6,15
	addi	a0,a0,12
	or	a3,a3,a7
	sw	a3,12(sp)
	bgt	a4,a6,.L20
	li	a7,0
	li	a3,0
.L3:
 #APP
# 57 "pmp.c" 1
	csrw pmpaddr15, a3
# 0 "" 2
 #NO_APP
	lw	a4,12(sp)
	or	a4,a4,a7
	sw	a4,12(sp)
	lw	a4,0(sp)
 #APP
# 64 "pmp.c" 1
	csrw pmpcfg0, a4
# 0 "" 2
 #NO_APP
	lw	a4,4(sp)
 #APP
# 65 "pmp.c" 1
	csrw pmpcfg1, a4
# 0 "" 2
 #NO_APP
	lw	a4,8(sp)
 #APP
# 66 "pmp.c" 1
	csrw pmpcfg2, a4
# 0 "" 2
 #NO_APP
	lw	a4,12(sp)
 #APP
# 67 "pmp.c" 1
	csrw pmpcfg3, a4
# 0 "" 2
 #NO_APP
	ble	a5,zero,.L1
	li	t1,8192
	li	a3,0
	lui	a6,%hi(pmp_faulted)
	addi	t1,t1,-2048
	li	a0,131072
	j	.L24
.L31:
 #APP
# 78 "pmp.c" 1
	lw a4, 0(a4)
# 0 "" 2
 #NO_APP
.L23:
 #APP
# 81 "pmp.c" 1
	csrc mstatus, a0
# 0 "" 2
 #NO_APP
	lw	a4,%lo(pmp_faulted)(a6)
	addi	a3,a3,1
	addi	a1,a1,8
	seqz	a4,a4
	sw	a4,0(a2)
	addi	a2,a2,4
	beq	a5,a3,.L1
.L24:
	lw	a4,0(a1)
	lw	a7,4(a1)
	sw	zero,%lo(pmp_faulted)(a6)
	add	a4,t3,a4
 #APP
# 75 "pmp.c" 1
	csrc mstatus, t1
# 0 "" 2
# 76 "pmp.c" 1
	csrs mstatus, a0
# 0 "" 2
 #NO_APP
	beq	a7,zero,.L31
 #APP
# 80 "pmp.c" 1
	sw zero, 0(a4)
# 0 "" 2
 #NO_APP
	j	.L23
.L20:
	lw	t4,0(a0)
	lw	t1,4(a0)
	lw	a7,8(a0)
	addi	a3,t3,-1
	addi	t1,t1,-1
	add	a3,a3,t4
	li	t4,1
	sll	t4,t4,t1
	andi	a7,a7,3
	andi	t1,a6,3
	add	a3,a3,t4
	ori	a7,a7,24
	slli	t1,t1,3
	srli	a3,a3,2
	sll	a7,a7,t1
	j	.L2
.L1:
	addi	sp,sp,16
	jr	ra
	.size	kernel, .-kernel
	.section	.sbss,"aw",@nobits
	.align	2
	.type	pmp_faulted, @object
	.size	pmp_faulted, 4
pmp_faulted:
	.zero	4
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
