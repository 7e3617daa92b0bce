	.file	"g2.c"
	.option nopic
	.attribute arch, "rv32i2p1_m2p0"
	.attribute unaligned_access, 0
	.attribute stack_align, 16
	.text
	.align	2
	.globl	towers
	.type	towers, @function
towers:
	beq	a0,zero,.L38
	addi	sp,sp,-176
	sw	s3,156(sp)
	sw	ra,172(sp)
	sw	s0,168(sp)
	sw	s1,164(sp)
	sw	s2,160(sp)
	sw	s4,152(sp)
	sw	s5,148(sp)
	sw	s6,144(sp)
	sw	s7,140(sp)
	sw	s8,136(sp)
	sw	s9,132(sp)
	sw	s10,128(sp)
	sw	s11,124(sp)
	li	a5,1
	li	s3,0
	beq	a0,a5,.L3
	addi	s9,a0,-2
	mv	s11,a1
	mv	s10,a2
	mv	s5,a3
	mv	s7,s3
	mv	s4,s9
.L11:
	beq	s4,zero,.L42
	addi	s4,s4,-1
	mv	a4,s4
	mv	s8,s10
	mv	s6,s11
	mv	s9,s11
	li	s2,0
	mv	s11,s10
	mv	s0,s7
	mv	s10,s4
	beq	a4,zero,.L43
.L32:
	addi	a4,a4,-1
	mv	a1,a4
	mv	s7,s6
	mv	a3,s6
	mv	a5,s0
	mv	a2,a4
	mv	s1,s5
	li	s3,0
	mv	s6,s8
	mv	s4,s9
	mv	s0,s11
	mv	a4,s2
	beq	a1,zero,.L44
.L33:
	addi	a1,a1,-1
	mv	t1,a1
	mv	a7,a3
	mv	a6,a4
	mv	a3,s3
	mv	a0,a5
	mv	s9,s4
	li	s11,0
	mv	s2,s6
	mv	a4,s7
	mv	a5,s6
	mv	s4,s0
	mv	s3,s5
	mv	s8,s7
	beq	t1,zero,.L45
.L34:
	addi	t1,t1,-1
	mv	s0,t1
	mv	t6,a3
	mv	t5,a4
	mv	t4,a5
	mv	t3,a7
	mv	a5,s10
	mv	a7,a6
	mv	s10,s3
	mv	a6,a0
	mv	s3,s4
	mv	a0,a2
	mv	s7,s1
	mv	s6,s8
	li	s5,0
	mv	a3,s8
	mv	a4,s1
	mv	s4,s9
	mv	a2,s11
	beq	s0,zero,.L46
.L35:
	addi	s0,s0,-1
	mv	s8,a2
	li	s1,0
	mv	t2,s0
	mv	a2,s2
	mv	s9,s6
.L24:
	beq	t2,zero,.L47
	addi	t2,t2,-1
	sw	s7,12(sp)
	sw	a3,32(sp)
	sw	a4,36(sp)
	sw	t3,48(sp)
	mv	a4,s3
	sw	a7,52(sp)
	sw	a6,56(sp)
	sw	s9,16(sp)
	sw	zero,20(sp)
	sw	t6,24(sp)
	sw	s6,28(sp)
	sw	t5,40(sp)
	sw	t4,44(sp)
	mv	s11,t2
	mv	s3,a2
	mv	a6,s10
	mv	a3,s4
	mv	s10,s7
	mv	t3,a5
	mv	s7,s1
	mv	a7,s0
	mv	a2,a4
	beq	s11,zero,.L21
.L48:
	lw	s4,16(sp)
	li	s1,0
	mv	a5,s1
	mv	a4,s11
	mv	s1,s11
	mv	t4,a3
	mv	s11,s10
	mv	s6,s5
	mv	s10,s9
	sw	s2,60(sp)
	mv	s9,s3
	mv	a3,s3
	mv	s5,s4
	mv	t5,a2
	mv	t6,a0
	mv	t0,a1
.L22:
	lw	s4,12(sp)
	mv	s3,s1
	mv	s2,s5
	li	s0,0
.L28:
	addi	s3,s3,-1
	mv	a2,s4
	mv	a1,s2
	mv	a0,s3
	sw	a7,108(sp)
	sw	t2,104(sp)
	sw	t1,100(sp)
	sw	t0,96(sp)
	sw	t6,92(sp)
	sw	t3,88(sp)
	sw	a6,84(sp)
	sw	t5,80(sp)
	sw	t4,76(sp)
	sw	a4,72(sp)
	sw	a5,68(sp)
	sw	a3,64(sp)
	call	towers
	addi	a1,a0,1
	mv	a2,s4
	lw	a3,64(sp)
	lw	a5,68(sp)
	lw	a4,72(sp)
	lw	t4,76(sp)
	lw	t5,80(sp)
	lw	a6,84(sp)
	lw	t3,88(sp)
	lw	t6,92(sp)
	lw	t0,96(sp)
	lw	t1,100(sp)
	lw	t2,104(sp)
	lw	a7,108(sp)
	add	s0,s0,a1
	mv	s4,s2
	beq	s3,zero,.L27
	mv	s2,a2
	j	.L28
.L42:
	addi	s3,s7,2
.L3:
	lw	ra,172(sp)
	lw	s0,168(sp)
	lw	s1,164(sp)
	lw	s2,160(sp)
	lw	s4,152(sp)
	lw	s5,148(sp)
	lw	s6,144(sp)
	lw	s7,140(sp)
	lw	s8,136(sp)
	lw	s9,132(sp)
	lw	s10,128(sp)
	lw	s11,124(sp)
	addi	a0,s3,1
	lw	s3,156(sp)
	addi	sp,sp,176
	jr	ra
.L47:
	mv	t0,s6
	addi	s1,s1,4
	mv	s6,s7
	mv	a2,s8
	add	s5,s5,s1
	mv	s7,t0
	bne	s0,zero,.L35
.L46:
	mv	s8,a3
	mv	s11,a2
	addi	s5,s5,4
	mv	a2,a0
	mv	a0,a6
	mv	a6,a7
	mv	a7,t3
	mv	t3,s8
	mv	s1,a4
	mv	s9,s4
	mv	s8,s2
	mv	s4,s3
	mv	a3,t6
	mv	s3,s10
	mv	a4,t5
	mv	s10,a5
	add	s11,s11,s5
	mv	a5,t4
	mv	s2,t3
	bne	t1,zero,.L34
.L45:
	mv	s7,a4
	mv	s6,a5
	mv	s5,s3
	mv	a5,a0
	mv	s3,a3
	mv	a0,s7
	addi	s11,s11,4
	mv	s0,s4
	mv	s7,s1
	mv	a4,a6
	mv	s4,s9
	mv	a3,a7
	add	s3,s3,s11
	mv	s1,a0
	bne	a1,zero,.L33
.L44:
	mv	s2,a4
	addi	s3,s3,4
	mv	a4,a2
	mv	s11,s0
	mv	s9,s4
	mv	s0,a5
	add	s2,s2,s3
	mv	s8,a3
	bne	a4,zero,.L32
.L43:
	addi	s2,s2,4
	mv	s4,s10
	add	s7,s0,s2
	mv	s10,s11
	mv	s11,s5
	mv	s5,s9
	j	.L11
.L27:
	addi	s0,s0,1
	addi	s1,s1,-1
	add	a5,a5,s0
	beq	s1,zero,.L26
	mv	a1,s5
	mv	s5,a3
	mv	a3,a1
	j	.L22
.L26:
	addi	s1,a5,2
	lw	a5,12(sp)
	lw	s0,16(sp)
	mv	s3,s9
	sw	a5,16(sp)
	lw	a5,20(sp)
	mv	s9,s10
	sw	s0,12(sp)
	add	a5,a5,s1
	mv	s10,s11
	sw	a5,20(sp)
	addi	s11,a4,-1
	lw	s2,60(sp)
	mv	s5,s6
	mv	a3,t4
	mv	a2,t5
	mv	a0,t6
	mv	a1,t0
	bne	s11,zero,.L48
.L21:
	mv	t0,a2
	mv	a2,s3
	mv	s3,t0
	mv	t0,s9
	lw	s9,20(sp)
	mv	s1,s7
	mv	s4,a3
	addi	s11,s9,4
	mv	s7,s10
	mv	a5,t3
	mv	s10,a6
	mv	s0,a7
	mv	s9,a2
	lw	t6,24(sp)
	lw	s6,28(sp)
	lw	a4,36(sp)
	lw	t5,40(sp)
	lw	t4,44(sp)
	lw	a3,32(sp)
	lw	a6,56(sp)
	lw	t3,48(sp)
	lw	a7,52(sp)
	add	s1,s1,s11
	mv	a2,t0
	j	.L24
.L38:
	ret
	.size	towers, .-towers
	.align	2
	.globl	sw
	.type	sw, @function
sw:
	li	a5,6
	bgtu	a0,a5,.L59
	lui	a5,%hi(.L52)
	slli	a0,a0,2
	addi	a5,a5,%lo(.L52)
	add	a5,a0,a5
	lw	a5,0(a5)
	jr	a5
	.section	.rodata
	.align	2
	.align	2
.L52:
	.word	.L58
	.word	.L57
	.word	.L56
	.word	.L55
	.word	.L54
	.word	.L53
	.word	.L51
	.text
.L53:
	srai	a0,a1,1
	ret
.L51:
	ori	a0,a1,9
	ret
.L58:
	addi	a0,a1,1
	ret
.L57:
	slli	a5,a1,1
	add	a0,a5,a1
	ret
.L56:
	addi	a0,a1,-7
	ret
.L55:
	xori	a0,a1,5
	ret
.L54:
	slli	a0,a1,2
	ret
.L59:
	li	a0,0
	ret
	.size	sw, .-sw
	.align	2
	.globl	isort
	.type	isort, @function
isort:
	li	a5,1
	ble	a1,a5,.L60
	slli	a1,a1,2
	addi	a7,a0,4
	add	t3,a0,a1
	li	t1,0
	li	a6,-1
.L65:
	lw	a1,0(a7)
	mv	a4,t1
	mv	a5,a7
	j	.L62
.L64:
	sw	a3,0(a5)
	addi	a5,a2,-4
	beq	a4,a6,.L67
.L62:
	lw	a3,-4(a5)
	addi	a4,a4,-1
	mv	a2,a5
	bgt	a3,a1,.L64
	sw	a1,0(a2)
	addi	a7,a7,4
	addi	t1,t1,1
	bne	t3,a7,.L65
.L60:
	ret
.L67:
	mv	a2,a0
	sw	a1,0(a2)
	addi	a7,a7,4
	addi	t1,t1,1
	bne	t3,a7,.L65
	j	.L60
	.size	isort, .-isort
	.section	.text.startup,"ax",@progbits
	.align	2
	.globl	main
	.type	main, @function
main:
	lui	a5,%hi(.LANCHOR0)
	addi	a5,a5,%lo(.LANCHOR0)
	lw	a4,16(a5)
	lw	a7,0(a5)
	lw	a6,4(a5)
	lw	a2,8(a5)
	lw	a3,12(a5)
	lw	a5,20(a5)
	addi	sp,sp,-48
	li	a1,6
	addi	a0,sp,8
	sw	a4,24(sp)
	sw	ra,44(sp)
	sw	a7,8(sp)
	sw	a6,12(sp)
	sw	a2,16(sp)
	sw	a3,20(sp)
	sw	a5,28(sp)
	call	isort
	li	a3,3
	li	a2,2
	li	a1,1
	li	a0,5
	call	towers
	lui	a3,%hi(.LANCHOR1)
	addi	a3,a3,%lo(.LANCHOR1)
	lw	a2,4(a3)
	sw	a0,0(a3)
	li	a4,0
	li	a1,1
.L71:
	slli	a5,a4,2
	addi	a5,a5,32
	add	a5,a5,sp
	lw	a5,-24(a5)
	bne	a4,a1,.L73
	addi	a4,a5,100
	slli	a5,a4,1
	add	a5,a5,a4
	add	a5,a5,a2
	lw	a4,20(sp)
	lw	a2,16(sp)
	lw	a1,24(sp)
	addi	a4,a4,100
	addi	a2,a2,93
	add	a5,a5,a2
	xori	a4,a4,5
	lw	a2,28(sp)
	add	a5,a5,a4
	lw	a4,8(sp)
	addi	a1,a1,100
	slli	a1,a1,2
	addi	a2,a2,100
	addi	a4,a4,100
	add	a5,a5,a1
	srai	a2,a2,1
	lw	ra,44(sp)
	add	a5,a5,a2
	ori	a4,a4,9
	add	a5,a4,a5
	sw	a5,4(a3)
	li	a0,0
	addi	sp,sp,48
	jr	ra
.L73:
	addi	a5,a5,101
	li	a4,1
	add	a2,a2,a5
	j	.L71
	.size	main, .-main
	.globl	results
	.bss
	.align	2
	.set	.LANCHOR1,. + 0
	.type	results, @object
	.size	results, 32
results:
	.zero	32
	.section	.rodata
	.align	2
	.set	.LANCHOR0,. + 0
.LC0:
	.word	5
	.word	3
	.word	9
	.word	1
	.word	7
	.word	2
	.ident	"GCC: (12.2.0-14+deb12u1+11+b2) 12.2.0"
