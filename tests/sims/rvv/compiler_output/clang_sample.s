	.text
	.attribute	4, 16
	.attribute	5, "rv32i2p0_m2p0_zve32x1p0_zvl32b1p0"
	.file	"relu.c"
	.globl	kernel
	.p2align	2
	.type	kernel,@function
kernel:
	blez	a2, .LBB0_2
.LBB0_1:
	vsetvli	a3, a2, e8, m1, ta, mu
	vle8.v	v8, (a0)
	vmax.vx	v8, v8, zero
	vse8.v	v8, (a1)
	add	a0, a0, a3
	sub	a2, a2, a3
	add	a1, a1, a3
	bgtz	a2, .LBB0_1
.LBB0_2:
	andi	a0, a2, 15
	lui	a3, %hi(tab)
	addi	a3, a3, %lo(tab)
	add	a0, a0, a3
	lb	a0, 0(a0)
	lui	a3, %hi(lsum)
	lw	a4, %lo(lsum)(a3)
	lui	a5, %hi(.L.str)
	addi	a5, a5, %lo(.L.str)
	add	a2, a2, a5
	lui	a5, %hi(gsum)
	lb	a2, 0(a2)
	sw	a0, %lo(gsum)(a5)
	add	a0, a4, a0
	sw	a0, %lo(lsum)(a3)
	sb	a2, 0(a1)
	ret
.Lfunc_end0:
	.size	kernel, .Lfunc_end0-kernel

	.globl	helper
	.p2align	2
	.type	helper,@function
helper:
	slli	a1, a0, 1
	add	a0, a1, a0
	ret
.Lfunc_end1:
	.size	helper, .Lfunc_end1-helper

	.globl	caller
	.p2align	2
	.type	caller,@function
caller:
	lui	a2, %hi(lsum)
	lw	a2, %lo(lsum)(a2)
	add	a0, a1, a0
	slli	a1, a0, 1
	add	a0, a1, a0
	add	a0, a2, a0
	ret
.Lfunc_end2:
	.size	caller, .Lfunc_end2-caller

	.type	tab,@object
	.section	.rodata.cst16,"aM",@progbits,16
tab:
	.ascii	"\001\002\003\004\005\006\007\b\t\n\013\f\r\016\017\020"
	.size	tab, 16

	.type	gsum,@object
	.section	.sbss,"aw",@nobits
	.globl	gsum
	.p2align	2
gsum:
	.word	0
	.size	gsum, 4

	.type	lsum,@object
	.p2align	2
lsum:
	.word	0
	.size	lsum, 4

	.type	.L.str,@object
	.section	.rodata.str1.1,"aMS",@progbits,1
.L.str:
	.asciz	"hello"
	.size	.L.str, 6

	.ident	"Debian clang version 14.0.6"
	.section	".note.GNU-stack","",@progbits
	.addrsig
