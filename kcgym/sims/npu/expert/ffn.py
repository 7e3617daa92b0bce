"""Expert FFN and SwiGLU: the GEMMs and the SiLU (and gate) fused on chip, weight tiles streamed through an MSRAM ring.

The template runs three operators through HBM: X @ W1 to a scratch matrix, SiLU over it
(reloaded), then the second GEMM (reloading it again, a few rows at a time, each load right
before its use). Here the hidden activation never leaves VSRAM: the first GEMM writes its
blocks straight into the row layout the second GEMM reads as its operand (strip j of H is
k-tile j of A), SiLU runs in place on four rows at a time, and the second GEMM consumes it.
X is loaded once. Weight tiles of both GEMMs form one stream through a ring of MSRAM slots,
each strip queued while the previous strip computes (tiles whose slot is still being read
are queued right after that strip's last M_MM). When the hidden layer does not fit VSRAM,
tokens are processed in groups (the weights are then streamed once per group). SwiGLU
adds the up projection U = X @ W3 as a second on-chip matrix and multiplies it into
SiLU(G) in place. The arithmetic is the template's, op for op.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.npu.compiler.emit import Asm, base_address
from kcgym.sims.npu.config import NPUConfig
from kcgym.sims.npu.expert.blocks import strip_times_block
from kcgym.tasks.base import Task, TaskConfig

A_ROWS_MAX = 512  # VSRAM rows for the hidden activation of one token group
SILU_GROUP = 4  # rows interleaved through the SiLU chain


def expert_ffn(task: Task, cfg: TaskConfig, hw: NPUConfig, layout: MemoryLayout) -> str:
    """FFN (``Y = SiLU(X @ W1) @ W2``) and SwiGLU (``Y = (SiLU(X @ W1) * (X @ W3)) @ W2``)."""
    gated = task.name == "swiglu"
    ups = 2 if gated else 1  # hidden matrices on chip: A (= the gate) and, for SwiGLU, U
    n, h, hi = cfg["n"], cfg["h"], cfg["hi"]
    V, L, B, S = hw.VLEN, hw.MLEN, hw.BLEN, hw.msram_tiles
    if h % L or hi % L or n % B:
        raise ValueError(f"the expert ffn needs h and hi multiples of {L} and n of {B}")
    kt1, kt2 = h // L, hi // L  # k-tiles of the first and of the second GEMM
    if max(kt1, kt2) > S:
        raise ValueError(f"a weight strip needs {max(kt1, kt2)} MSRAM tiles; this NPU has {S}")
    tg = min(n, max(B, A_ROWS_MAX // (kt2 * ups) // B * B))  # tokens per group
    if n % tg:
        raise ValueError(f"{n} tokens do not split into groups of {tg}")
    XB = 0  # X, k-tile-major: row k*n + token
    AB = XB + kt1 * n * V  # A of one token group, strip-major: row j*tg + token
    UB = AB + kt2 * tg * V  # SwiGLU's up projection, same layout
    OUT = [UB + (ups - 1) * kt2 * tg * V, UB + (ups - 1) * kt2 * tg * V + B * V]
    TMP = OUT[1] + B * V  # SiLU scratch rows
    DUMMY = TMP + SILU_GROUP * V
    if hw.vsram_rows < DUMMY // V + B:
        raise ValueError("VSRAM too small for X and one token group's hidden activation")

    asm = Asm(f"expert {task.title} {cfg.label}: fused on chip, weights streamed through an MSRAM ring")
    names = ("X", "W1", "W3", "W2", "Y") if gated else ("X", "W1", "W2", "Y")
    for i, name in enumerate(names):
        base_address(asm, layout, name, f"a{i}")
    w2, y = f"a{len(names) - 2}", f"a{len(names) - 1}"

    # the weight stream: (areg, row stride, k-tiles, column offset of the strip) in order of use
    groups: list[tuple[str, int, int, int]] = []
    for _ in range(n // tg):
        for u in range(ups):
            groups += [(f"a{1 + u}", hi, kt1, j * L) for j in range(kt2)]  # W1 (and W3) strips
        groups += [(w2, h, kt2, o * L) for o in range(kt1)]  # W2 strips
    first_slot = [0]
    for _, _, kt, _ in groups:
        first_slot.append(first_slot[-1] + kt)

    def slots(g: int) -> list[int]:
        return [(first_slot[g] + k) % S for k in range(groups[g][2])]

    def load(g: int, ks: list[int]) -> None:
        if not ks:
            return
        areg, ld, _, col = groups[g]
        asm.li("gp1", ld)
        asm("C_SET_STRIDE_REG gp1", "weight rows")
        for k in ks:
            asm.li("gp2", k * L * ld + col)
            asm.li("gp3", slots(g)[k] * L * L)
            asm(f"H_PREFETCH_M gp3, gp2, {areg}, 1", f"weight strip {g}, k-tile {k} -> slot {slots(g)[k]}")

    def split_next(g: int) -> tuple[list[int], list[int]]:
        """k-tiles of strip g+1 whose slots strip g leaves free (queue now) / still reads (queue after it)."""
        if g + 1 >= len(groups):
            return [], []
        busy = set(slots(g))
        ks = range(groups[g + 1][2])
        return [k for k in ks if slots(g + 1)[k] not in busy], [k for k in ks if slots(g + 1)[k] in busy]

    def y_block(g: int, buf: int) -> None:
        """One token block (gp5: its A rows) times W2 strip g into OUT[buf], stored at gp9."""
        strip_times_block(asm, hw, "gp5", [k * tg * V for k in range(kt2)], slots(g), OUT[buf], DUMMY)
        asm.li("gp1", h)
        asm("C_SET_STRIDE_REG gp1", "Y rows are h apart")
        asm.li("gp3", OUT[buf])
        asm(f"H_STORE_V gp3, gp9, {y}, 1, {B}", "drains while the next block computes")
        asm(f"S_ADDI_INT gp5, gp5, {B * V}")
        asm.li("gp1", B * h)
        asm("S_ADD_INT gp9, gp9, gp1")

    asm.comment("X once (k-tile-major), then the first weight strip")
    asm.li("gp1", h)
    asm("C_SET_STRIDE_REG gp1", "X rows are h apart")
    for k in range(kt1):
        for t0 in range(0, n, hw.v_prefetch_rows):
            rows = min(hw.v_prefetch_rows, n - t0)
            asm.li("gp2", t0 * h + k * L)
            asm.li("gp3", XB + (k * n + t0) * V)
            asm(f"H_PREFETCH_V gp3, gp2, a0, 1, {rows}", f"X tokens {t0}.., k-tile {k}")
    load(0, list(range(groups[0][2])))
    asm("S_LI_FP f1, -1.0")
    asm("S_LI_FP f2, 1.0")

    XSTATE, YSTATE = 0, 1  # INT SRAM: VSRAM address of the token group's X rows, HBM offset of its Y rows
    asm.li("gp1", XB)
    asm(f"S_ST_INT gp1, gp0, {XSTATE}")
    asm(f"S_ST_INT gp0, gp0, {YSTATE}")

    def token_group(g: int) -> int:
        """Emit one token group, its weight strips numbered from g; returns the next strip number."""
        for u, dest in enumerate((AB, UB)[:ups]):
            asm.comment(f"==== {'AU'[u]} = X @ W{(1, 3)[u]} for the token group, strip by strip, into VSRAM")
            for j in range(kt2):
                early, late = split_next(g)
                load(g + 1, early)
                asm(f"S_LD_INT gp5, gp0, {XSTATE}", "X rows of the token block, k-tile 0")
                asm.li("gp8", dest + j * tg * V, "its rows of the hidden matrix, strip j")
                with asm.loop("gp14", tg // B, "token blocks"):
                    strip_times_block(asm, hw, "gp5", [k * n * V for k in range(kt1)], slots(g), "gp8", DUMMY)
                    asm(f"S_ADDI_INT gp5, gp5, {B * V}")
                    asm(f"S_ADDI_INT gp8, gp8, {B * V}")
                load(g + 1, late)
                g += 1
        asm.comment("A = SiLU(A)" + (" * U" if gated else "") + " in place, four rows at a time (the template's ops)")
        xs, ts = [f"gp{5 + r}" for r in range(SILU_GROUP)], ["gp9", "gp10", "gp11", "gp13"][:SILU_GROUP]
        for r in range(SILU_GROUP):
            asm.li(xs[r], AB + r * V)
            asm.li(ts[r], TMP + r * V)
        with asm.loop("gp14", kt2 * tg // SILU_GROUP, "groups of rows of A"):
            for op in ("V_MUL_VF {t}, {x}, f1", "V_EXP_V {t}, {t}", "V_ADD_VF {t}, {t}, f2", "V_RECI_V {t}, {t}",
                       "V_MUL_VV {x}, {x}, {t}"):
                for x, t in zip(xs, ts, strict=True):
                    asm(op.format(x=x, t=t))
            if gated:
                for x in xs:
                    asm(f"S_ADDI_INT gp1, {x}, {UB - AB}", "the U row of this A row")
                    asm(f"V_MUL_VV {x}, {x}, gp1", "A = SiLU(G) * U")
            for x in xs:
                asm(f"S_ADDI_INT {x}, {x}, {SILU_GROUP * V}")
        asm.comment("Y = A @ W2, strip by strip; outputs double-buffered")
        for o in range(kt1):
            early, late = split_next(g)
            load(g + 1, early)
            asm.li("gp5", AB, "A rows of the token block, k-tile 0")
            asm(f"S_LD_INT gp9, gp0, {YSTATE}")
            asm(f"S_ADDI_INT gp9, gp9, {o * L}", "HBM offset of its Y block")
            pairs, odd = divmod(tg // B, 2)
            if pairs:
                with asm.loop("gp14", pairs, "pairs of token blocks, one per output buffer"):
                    y_block(g, 0)
                    y_block(g, 1)
            if odd:
                y_block(g, 0)
            load(g + 1, late)
            g += 1
        asm(f"S_LD_INT gp1, gp0, {XSTATE}")
        asm(f"S_ADDI_INT gp1, gp1, {tg * V}")
        asm(f"S_ST_INT gp1, gp0, {XSTATE}", "next token group")
        asm(f"S_LD_INT gp1, gp0, {YSTATE}")
        asm.li("gp2", tg * h)
        asm("S_ADD_INT gp1, gp1, gp2")
        asm(f"S_ST_INT gp1, gp0, {YSTATE}")
        return g

    per_group = len(groups) // (n // tg)
    if n // tg > 1 and first_slot[per_group] % S == 0:
        # every token group streams the same tiles into the same slots: one loop body serves them all (the
        # last iteration prefetches the next group's first tiles for nothing, a few hundred cycles)
        with asm.loop("gp12", n // tg, f"token groups of {tg}"):
            token_group(0)
    else:
        g = 0
        for _ in range(n // tg):
            g = token_group(g)
    return asm.text()


EXPERTS = dict.fromkeys(("ffn", "swiglu"), expert_ffn)  # task name -> kernel, found by kcgym.sims.npu.expert
