"""The hostile sources of issue 14, per machine: each must be an ordinary assembly error, fast.

Shared by the regression tests (tests/isa/test_limits.py), the env-level tests and the fuzz
benchmark, so every path is tried with the same strings.
"""

from __future__ import annotations

# per machine: a no-op, an instruction with an immediate operand ({imm}), a jump to {label}
SYNTAX = {
    "NPU": {"nop": "C_NOP", "imm": "S_ADDI_INT gp1, gp0, {imm}", "jump": None},
    "VLIW": {"nop": "NOP", "imm": "ADDI r1, r0, {imm}", "jump": "J {label}"},
    "RVV": {"nop": "nop", "imm": "addi a0, zero, {imm}", "jump": "j {label}"},
}
DEEP = "(" * 130 + "1" + ")" * 130
HUGE = "1" * 5000  # past Python's 4,300-digit int limit


def hostile_sources(machine: str) -> dict[str, str]:
    """Name -> source; every one is an assembly error on ``machine``."""
    s = SYNTAX[machine]
    nop, imm = s["nop"], s["imm"]
    out = {
        "deep_parens_operand": imm.format(imm=DEEP),
        "deep_parens_equ": f".equ X, {DEEP}\n{nop}",
        "deep_parens_rept": f".rept {DEEP}\n{nop}\n.endr",
        "deep_unary": imm.format(imm="-" * 3000 + "1"),
        "huge_literal": imm.format(imm=HUGE),
        "huge_literal_equ": f".equ X, {HUGE}\n{nop}",
        "nested_empty_rept": ".rept 30000\n.rept 30000\n.endr\n.endr",
        "recursive_macro": ".macro m\nm\nm\n.endm\nm",
        "set_square": ".set a, 3\n" + ".set a, a*a\n" * 40 + imm.format(imm="a"),
        "doubling_macro_arg": ".macro m a\nm \\a\\a\n.endm\nm x",
        "long_line": nop + " " + "x" * 20_000,
        "if_without_endif": ".if 1\n" + nop,
        "many_errors": "bogus\n" * 20_000,
        "rept_unknown_directive": f".rept 60000\n.vnct --349454\n{nop}\n.endr",  # found by the fuzzer
    }
    if s["jump"]:
        n = 2500
        labels = "".join(f"label_{i}: {nop}\n" for i in range(n))
        jumps = "".join(s["jump"].format(label=f"labl_{i}") + "\n" for i in range(n))
        out["near_miss_labels"] = labels + jumps
    if machine == "RVV":
        out.update({
            "jal_no_operands": "jal\nfoo:\nnop",
            "jalr_no_operands": "jalr\nfoo:\nnop",
            "data_rept_zero": ".data\n.rept 30000\n.zero 32768\n.endr",
            "data_rept_balign": ".data\n.rept 60000\n.byte 1\n.balign 4096\n.endr",
            "text_rept_balign": ".text\n.rept 60000\nnop\n.balign 4096\n.endr",
            "nested_relocations": "lui a0, " + "%hi(" * 200 + "1" + ")" * 200,
        })
    return out
