	.file	"g.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.section	.rodata.str1.4,"aMS",@progbits,1
	.align	2
.LC0:
	.string	"hello"
	.text
	.align	2
	.globl	kernel
	.type	kernel, @function
kernel:
	ble	a2,zero,.L2
	mv	a3,a1
	add	a6,a0,a2
.L4:
	lbu	a4,0(a0)
	addi	a3,a3,1
	addi	a0,a0,1
	slli	a5,a4,24
	srai	a5,a5,24
	not	a5,a5
	srai	a5,a5,31
	and	a4,a4,a5
	sb	a4,-1(a3)
	bne	a6,a0,.L4
.L2:
	lui	a3,%hi(.LANCHOR0)
	andi	a5,a2,15
	addi	a3,a3,%lo(.LANCHOR0)
	add	a3,a3,a5
	andi	a0,a2,7
	lui	a5,%hi(.LC0)
	lui	a4,%hi(.LANCHOR2)
	slli	a0,a0,2
	addi	a5,a5,%lo(.LC0)
	addi	a4,a4,%lo(.LANCHOR2)
	add	a5,a2,a5
	add	a4,a4,a0
	lw	a7,0(a4)
	lb	a0,0(a3)
	lbu	a4,0(a5)
	lui	a6,%hi(lsum)
	lui	a5,%hi(.LANCHOR1)
	lw	a3,%lo(lsum)(a6)
	slli	a2,a2,2
	addi	a5,a5,%lo(.LANCHOR1)
	add	a5,a5,a2
	lui	a2,%hi(gsum)
	sw	a0,%lo(gsum)(a2)
	li	a2,2
	sw	a2,0(a5)
	add	a3,a3,a0
	add	a5,a4,a7
	sw	a3,%lo(lsum)(a6)
	sb	a5,0(a1)
	ret
	.size	kernel, .-kernel
	.align	2
	.globl	h2
	.type	h2, @function
h2:
	lui	a5,%hi(lsum)
	lw	a4,%lo(lsum)(a5)
	slli	a5,a0,3
	sub	a0,a5,a0
	add	a0,a0,a4
	ret
	.size	h2, .-h2
	.align	2
	.globl	caller
	.type	caller, @function
caller:
	mul	a4,a0,a0
	mv	a5,a0
	addi	sp,sp,-16
	addi	a3,a0,1
	sw	s0,8(sp)
	mv	a0,a1
	sw	ra,12(sp)
	mul	a4,a4,a5
	div	s0,a4,a3
	call	h2
	lui	a5,%hi(lsum)
	lw	a5,%lo(lsum)(a5)
	lw	ra,12(sp)
	add	a0,a0,s0
	lw	s0,8(sp)
	add	a0,a0,a5
	addi	sp,sp,16
	jr	ra
	.size	caller, .-caller
	.align	2
	.globl	sw
	.type	sw, @function
sw:
	li	a5,5
	bgtu	a0,a5,.L12
	lui	a5,%hi(.LANCHOR0)
	slli	a0,a0,2
	addi	a5,a5,%lo(.LANCHOR0)
	add	a5,a5,a0
	lw	a0,16(a5)
	ret
.L12:
	li	a0,0
	ret
	.size	sw, .-sw
	.align	2
	.globl	mul64
	.type	mul64, @function
mul64:
	mul	a3,a3,a0
	mul	a1,a1,a2
	mulhu	a5,a0,a2
	add	a1,a1,a3
	mul	a0,a0,a2
	add	a1,a1,a5
	ret
	.size	mul64, .-mul64
	.align	2
	.globl	tailer
	.type	tailer, @function
tailer:
	addi	a0,a0,1
	tail	h2
	.size	tailer, .-tailer
	.globl	st
	.globl	bigtab
	.globl	garr
	.globl	gsum
	.section	.rodata
	.align	2
	.set	.LANCHOR0,. + 0
	.type	tab, @object
	.size	tab, 16
tab:
	.ascii	"\001\002\003\004\005\006\007\b\t\n\013\f\r\016\017\020"
	.type	CSWTCH.12, @object
	.size	CSWTCH.12, 24
CSWTCH.12:
	.word	5
	.word	9
	.word	13
	.word	1
	.word	77
	.word	3
	.data
	.align	2
	.set	.LANCHOR2,. + 0
	.type	bigtab, @object
	.size	bigtab, 32
bigtab:
	.word	1
	.word	2
	.word	3
	.word	4
	.word	5
	.word	6
	.word	7
	.word	8
	.bss
	.align	2
	.set	.LANCHOR1,. + 0
	.type	garr, @object
	.size	garr, 400
garr:
	.zero	400
	.section	.sbss,"aw",@nobits
	.align	2
	.type	lsum, @object
	.size	lsum, 4
lsum:
	.zero	4
	.type	gsum, @object
	.size	gsum, 4
gsum:
	.zero	4
	.section	.sdata,"aw"
	.align	2
	.type	st, @object
	.size	st, 8
st:
	.word	1
	.byte	120
	.zero	3
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
