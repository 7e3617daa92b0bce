"""Generated instruction-level programs covering every mnemonic of the RVV table (for the QEMU diff test).

Each program loads random data into all vector registers and nine scalar registers, then
runs snippets: set a vtype and AVL, execute one instruction (sometimes masked), log its
result to external memory. Sources come from v8.. (vs2) and v16.. (vs1), destinations are
v4 (a group of at most 4), index vectors live in v24..v29 with unique, aligned offsets, so
no snippet hits a reserved overlap. The log, the final registers and both memories are
compared with QEMU.
"""

from __future__ import annotations

import numpy as np

from kcgym.sims.rvv import isa as I

EXT_SIZE = 16384
LOG_OFFSET = 0x2000
LOAD_AREA, STORE_AREA = 0x600, 0xA00
VTYPES = ((8, 1), (16, 2), (32, 1), (8, 2), (16, 1), (32, 2))
SCALARS = ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9")


def ext_image(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, EXT_SIZE, dtype=np.uint8)
    img[LOG_OFFSET:] = 0
    words = img[512:548].view(np.int32)
    words[:3] = (0, -1, -(1 << 31))  # s1..s3: divide-by-zero and overflow cases
    words[3] = rng.integers(0, 32)  # s4: a small value (shift amounts, slide offsets)
    # index patterns: unique offsets, multiples of 4, for index EEW 8 (v24), 16 (v26), 32 (v28)
    img[0x400:0x420] = rng.choice(np.arange(0, 256, 4), 32, replace=False).astype(np.uint8)
    img[0x420:0x440] = rng.choice(np.arange(0, 512, 4), 16, replace=False).astype(np.uint16).view(np.uint8)
    img[0x440:0x460] = rng.choice(np.arange(0, 512, 4), 8, replace=False).astype(np.uint32).view(np.uint8)
    return img


PROLOGUE = """    li s0, 0x20000000
    li t0, 128
    vsetvli t0, t0, e8, m8, ta, ma
    vle8.v v0, (s0)
    addi t1, s0, 128
    vle8.v v8, (t1)
    addi t1, s0, 256
    vle8.v v16, (t1)
    addi t1, s0, 0x400
    vle8.v v24, (t1)
""" + "".join(f"    lw {r}, {512 + 4 * i}(s0)\n" for i, r in enumerate(SCALARS)) + f"""\
    li s11, {0x20000000 + LOG_OFFSET}
    li t2, {0x20000000 + LOAD_AREA + 0x100}
    li t3, {0x20000000 + STORE_AREA + 0x100}
"""


def _log_v() -> list[str]:
    return ["vsetvli t0, x0, e8, m4, ta, ma", "vse8.v v4, (s11)", "addi s11, s11, 64"]


def _log_x(reg: str = "a0") -> list[str]:
    return [f"sw {reg}, 0(s11)", "addi s11, s11, 4"]


def _vset(rng: np.random.Generator, sew: int, lmul: int) -> list[str]:
    vlmax = lmul * 128 // sew
    avl = int(rng.integers(1, vlmax + 3))
    return [f"li s10, {avl}", f"vsetvli t0, s10, e{sew}, m{lmul}, ta, ma"]


def _illegal_width(spec: I.RVInstr, sew: int, lmul: int) -> bool:
    """Widening/narrowing past e32 or a group of 8, or extension from below e8."""
    if spec.w in (I.W_WIDEN, I.W_WIDEN_W, I.W_NARROW) and (sew == 32 or lmul > 2):
        return spec.cls != "VRED" or sew == 32
    return spec.w == I.W_EXT2 and sew < 16 or spec.w == I.W_EXT4 and sew < 32


def _vector_snippet(spec: I.RVInstr, rng: np.random.Generator) -> list[str] | None:
    form = spec.form
    options = []
    for sew, lmul in VTYPES:
        if spec.cls in ("VLOAD", "VSTORE"):
            eew = spec.w
            emul = eew * lmul / sew
            if spec.src == I.MODE_INDEXED:
                if eew * lmul / sew > 2 or lmul > 4:
                    continue
            elif emul > 4 or emul < 0.25:
                continue
        elif _illegal_width(spec, sew, lmul):
            continue
        options.append((sew, lmul))
    if not options:
        return None
    picks = [options[i] for i in rng.choice(len(options), min(2, len(options)), replace=False)]
    out: list[str] = []
    for sew, lmul in picks:
        masked = "[, v0.t]" in I.FORMS[form] and rng.random() < 0.4
        mask = ", v0.t" if masked else ""
        xs = str(rng.choice(SCALARS))
        m = spec.mnemonic
        out += _vset(rng, sew, lmul)
        if spec.cls in ("VLOAD", "VSTORE"):
            eew = spec.w
            data = "v4" if spec.cls == "VLOAD" else "v8"
            base = "t2" if spec.cls == "VLOAD" else "t3"
            if spec.src == I.MODE_UNIT:
                out.append(f"{m} {data}, ({base}){mask}")
            elif spec.src == I.MODE_STRIDED:
                step = eew // 8 * int(rng.choice([-3, -1, 1, 2, 5]))
                out += [f"li a1, {step}", f"{m} {data}, ({base}), a1{mask}"]
            else:
                out.append(f"{m} {data}, ({base}), v{ {8: 24, 16: 26, 32: 28}[eew]}{mask}")
            if spec.cls == "VLOAD":
                out += _log_v()
            else:
                out.append(f"addi t3, t3, {int(rng.integers(1, 4)) * 8}")
            continue
        if form in ("VV",):
            out.append(f"{m} v4, v8, v16{mask}")
        elif form == "VX":
            if spec.cls == "VPERM":
                out += [f"li a1, {int(rng.integers(0, 20))}", f"{m} v4, v8, a1{mask}"]
            else:
                out.append(f"{m} v4, v8, {xs}{mask}")
        elif form == "VI":
            out.append(f"{m} v4, v8, {int(rng.integers(-16, 16))}{mask}")
        elif form == "VIU":
            out.append(f"{m} v4, v8, {int(rng.integers(0, 32))}{mask}")
        elif form == "VVMA":
            out.append(f"{m} v4, v16, v8{mask}")
        elif form == "VXMA":
            out.append(f"{m} v4, {xs}, v8{mask}")
        elif form == "VVM":
            out.append(f"{m} v4, v8, v16, v0")
        elif form == "VXM":
            out.append(f"{m} v4, v8, {xs}, v0")
        elif form == "VIM":
            out.append(f"{m} v4, v8, {int(rng.integers(-16, 16))}, v0")
        elif form == "MVV":
            out.append(f"{m} v4, v16")
        elif form == "MVX":
            out.append(f"{m} v4, {xs}")
        elif form == "MVI":
            out.append(f"{m} v4, {int(rng.integers(-16, 16))}")
        elif form == "V2":
            out.append(f"{m} v4, v8{mask}")
        elif form == "V0":
            out.append(f"{m} v4{mask}")
        elif form == "XV":
            out += [f"{m} a0, v8"] + _log_x()
            continue
        elif form == "VXS":
            out.append(f"{m} v4, {xs}")
        elif form == "XM":
            out += [f"{m} a0, v8{mask}"] + _log_x()
            continue
        elif form == "MM":
            out.append(f"{m} v4, v8, v16")
        else:
            raise AssertionError(form)
        out += _log_v()
    return out


def _scalar_snippet(spec: I.RVInstr, rng: np.random.Generator) -> list[str]:
    m, form = spec.mnemonic, spec.form
    a, b = (str(r) for r in rng.choice(SCALARS, 2))
    if form == "R":
        out = []
        for x, y in ((a, b), ("s2", "s1"), ("s3", "s2"), ("s1", "s3")):  # random, /0, MIN/-1, 0/MIN
            out += [f"{m} a0, {x}, {y}"] + _log_x()
        return out
    if form == "I":
        return [f"{m} a0, {a}, {int(rng.integers(-2048, 2048))}"] + _log_x()
    if form == "SH":
        return [f"{m} a0, {a}, {int(rng.integers(0, 32))}"] + _log_x()
    if form == "U":
        if m == "auipc":
            return ["la a0, data_word", "lw a1, 4(a0)"] + _log_x("a1")
        return [f"{m} a0, {int(rng.integers(0, 1 << 20))}"] + _log_x()
    if form == "LD":
        size = {"lb": 1, "lbu": 1, "lh": 2, "lhu": 2, "lw": 4}[m]
        return [f"{m} a0, {size * int(rng.integers(-60, 60))}(t2)"] + _log_x()
    if form == "ST":
        size = {"sb": 1, "sh": 2, "sw": 4}[m]
        return [f"{m} {a}, {size * int(rng.integers(-60, 60))}(t3)"]
    if form == "B":
        out = []
        for x, y in ((a, b), (a, a), ("s2", "s1")):
            out += ["li a0, 0", f"{m} {x}, {y}, 1f", "li a0, 1", "1:"] + _log_x()
        return out
    if form == "JAL":
        return ["jal a0, 1f", "1:", "la a1, 1b", "sub a0, a0, a1", "li a1, 0"] + _log_x()
    if form == "JALR":
        return ["la a1, 2f", "jalr a0, 0(a1)", "2:", "la a2, 2b", "sub a0, a0, a2", "li a1, 0", "li a2, 0"] + _log_x()
    if form == "CSR":
        return ["csrr a0, vl", *_log_x(), "csrr a0, vtype", *_log_x(), "csrr a0, vlenb", *_log_x()]
    if form == "VSETVLI":
        return ["vsetvli a0, x0, e16, m4, ta, mu", *_log_x(), f"li a1, {int(rng.integers(0, 40))}",
                "vsetvli a0, a1, e32, m2, tu, ma", *_log_x(), "vsetvli x0, x0, e16, m1, ta, ma", "csrr a0, vl",
                *_log_x(), "csrr a0, vtype", *_log_x()]
    if form == "VSETIVLI":
        return [f"vsetivli a0, {int(rng.integers(0, 32))}, e8, m2, ta, ma", *_log_x(), "csrr a0, vtype", *_log_x()]
    if form == "VSETVL":
        return ["li a1, 0xd1", "li a2, 100", "vsetvl a0, a2, a1", *_log_x(), "csrr a0, vtype", *_log_x(),
                "li a1, 0x100", "vsetvl a0, a2, a1", *_log_x(), "csrr a0, vtype", *_log_x(), "csrr a0, vl",
                *_log_x(), "vsetvli x0, a2, e8, m1, ta, ma"]
    raise AssertionError(form)


def programs(seed: int = 0, per_program: int = 36) -> list[tuple[str, set[str]]]:
    """``[(source, mnemonics covered)]``: every mnemonic of the table at least once."""
    rng = np.random.default_rng(seed)
    snippets: list[tuple[str, list[str]]] = []
    for spec in I.INSTRUCTIONS:
        if spec.cls in ("ALU", "MULDIV", "LOAD", "STORE", "BRANCH", "JUMP", "CSR", "VSET"):
            snippets.append((spec.mnemonic, _scalar_snippet(spec, rng)))
        else:
            body = _vector_snippet(spec, rng)
            if body is None:
                raise AssertionError(f"no legal vtype to test {spec.mnemonic}")
            snippets.append((spec.mnemonic, body))
    order = rng.permutation(len(snippets))
    out = []
    for start in range(0, len(order), per_program):
        chunk = [snippets[i] for i in order[start : start + per_program]]
        lines = [PROLOGUE] + ["    " + ln if not ln.endswith(":") else ln for _, body in chunk for ln in body]
        lines += ["    ret", "    .data", "data_word: .word 0x11223344, 0x55667788"]
        out.append(("\n".join(lines) + "\n", {m for m, _ in chunk}))
    return out



def class_programs(cls: str, seeds: tuple[int, ...] = (0, 1, 2), fault: str | None = None,
                   per_program: int = 48) -> list[str]:
    """Every mnemonic of one vector class (``VARITH``, ``VRED``...), each at the vtypes of several seeds, as
    programs of at most ``per_program`` snippets (their logs fit the external memory); ``fault``: a last
    instruction of each that faults."""
    snippets: list[list[str]] = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        snippets += [body for spec in I.INSTRUCTIONS if spec.cls == cls and (body := _vector_snippet(spec, rng))]
    out = []
    for start in range(0, len(snippets), per_program):
        body = [ln for snippet in snippets[start : start + per_program] for ln in snippet] + ([fault] if fault else [])
        lines = [PROLOGUE] + ["    " + ln if not ln.endswith(":") else ln for ln in body]
        out.append("\n".join(lines + ["    ret", "    .data", "data_word: .word 0x11223344, 0x55667788"]) + "\n")
    return out
