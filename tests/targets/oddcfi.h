/*
 * oddcfi.h — two hand-written functions whose CFI the rule cache in
 * src/unwind/unwind.c does not model, for the libunwind fallback's tests:
 *
 *   oddcfi_expr(arg, fn)  CFA given by DW_CFA_def_cfa_expression
 *                         "breg7(rsp) 0; const1u 32; plus" (a general
 *                         expression, not the "reg + off" or "*(reg + off)"
 *                         forms the cache knows)
 *     → oddcfi_rbx(arg, fn)  CFA = rbx + 16 after it realigns rsp: above the
 *                         leaf the cache tracks only rsp and rbp
 *       → fn(arg)         a C function (the hot leaf, or a capture)
 *
 * Both keep their callers' registers (rbx is saved with its CFI), so a
 * DWARF unwinder that evaluates expressions and tracks every register
 * (libunwind, libdw) walks through them to main. Header only: the target
 * (oddcfi.c) and test_unwind include it.
 */
#ifndef STACKTOP_TEST_ODDCFI_H
#define STACKTOP_TEST_ODDCFI_H

#include <stdint.h>

typedef uint64_t (*oddcfi_fn)(uint64_t);
uint64_t oddcfi_expr(uint64_t arg, oddcfi_fn fn);
uint64_t oddcfi_rbx(uint64_t arg, oddcfi_fn fn);

__asm__(".text\n"
	".globl oddcfi_expr\n"
	".type oddcfi_expr,@function\n"
	"oddcfi_expr:\n"
	".cfi_startproc\n"
	"sub $24, %rsp\n"
	/* DW_CFA_def_cfa_expression, 5 bytes: DW_OP_breg7 0, DW_OP_const1u 32,
	 * DW_OP_plus: CFA = rsp + 32 */
	".cfi_escape 0x0f, 0x05, 0x77, 0x00, 0x08, 0x20, 0x22\n"
	"call oddcfi_rbx\n"
	"add $24, %rsp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size oddcfi_expr, .-oddcfi_expr\n"

	".globl oddcfi_rbx\n"
	".type oddcfi_rbx,@function\n"
	"oddcfi_rbx:\n"
	".cfi_startproc\n"
	"push %rbx\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_offset %rbx, -16\n"
	"mov %rsp, %rbx\n"
	".cfi_def_cfa_register %rbx\n"
	"and $-64, %rsp\n"
	"sub $64, %rsp\n"
	"call *%rsi\n"
	"mov %rbx, %rsp\n"
	".cfi_def_cfa_register %rsp\n"
	"pop %rbx\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbx\n"
	"ret\n"
	".cfi_endproc\n"
	".size oddcfi_rbx, .-oddcfi_rbx\n");

#endif
