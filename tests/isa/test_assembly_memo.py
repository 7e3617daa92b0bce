"""The assembler's per-ISA memos (parsed pieces, checked operands, encoded rows) change no outcome: a warm
assembly equals a cold one (memos emptied) word for word and diagnostic for diagnostic, symbols are
re-evaluated per kernel, warnings repeat, and -0.0 keeps its sign."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.isa import assembler
from kcgym.isa.diagnostics import AssemblyError
from kcgym.sims.npu.accelerator import ACCELERATOR as NPU
from kcgym.sims.vliw.accelerator import ACCELERATOR as VLIW
from kcgym.tasks import TASKS


def _clear(isa) -> None:
    t = assembler._tables(isa)
    for memo in (t.parsed, t.checked, t.rows, t.writes, t.lines):
        memo.clear()


def _outcome(acc, hw, source: str):
    try:
        p = acc.assemble(source, hw)
    except AssemblyError as e:
        return "error", e.render()
    return p.words.tobytes(), p.words.shape, p.lines, [w.render() for w in p.warnings], getattr(p, "slot_lines", None)


def _isa(acc, hw):
    from kcgym.sims.npu.isa import make_isa as npu_isa
    from kcgym.sims.vliw.isa import make_isa as vliw_isa

    return (npu_isa if acc is NPU else vliw_isa)(hw)


def _sources(acc, hw) -> list[str]:
    task = TASKS["matmul"]
    cfg = task.config(acc.name, 1)
    compiled = acc.compile(task, cfg, hw)
    if acc is NPU:
        extra = [".equ N, 3\nS_ADDI_INT gp1, gp0, N\n", ".equ N, 5\nS_ADDI_INT gp1, gp0, N\n",
                 "S_LI_FP f1, 0.0\nS_LI_FP f2, -0.0\n", "S_LI_FP f1, -0.0\nS_LI_FP f2, 0.0\n",
                 "S_ADDI_INT gp0, gp0, 1\n", "S_ADDI_INT gp1, gp0, 1 + 2\n", "S_ADDI_INT gp1, gp0, 99999999\n"]
    else:
        extra = [".equ N, 3\nMOVI r1, N\n", ".equ N, 5\nMOVI r1, N\n", "MOVI r0, 1\n", "MOVI r1, 1 || MOVI r1, 2\n"]
    return [compiled, *extra, compiled.replace("\n", "\n\n", 3), *extra]


@pytest.mark.parametrize("acc", [NPU, VLIW], ids=["NPU", "VLIW"])
def test_warm_assembly_equals_cold(acc):
    hw = acc.make_hw()
    isa = _isa(acc, hw)
    sources = _sources(acc, hw)
    warm = [_outcome(acc, hw, s) for s in sources]  # memos filled by the first of each, then hit
    cold = []
    for s in sources:
        _clear(isa)
        cold.append(_outcome(acc, hw, s))
    assert warm == cold
    assert len({w[0] for w in warm if w[0] != "error"}) >= 4


def test_symbols_warnings_and_signed_zero_survive_the_memo():
    hw = NPU.make_hw()
    a = NPU.assemble(".equ N, 3\nS_ADDI_INT gp1, gp0, N\n", hw)
    b = NPU.assemble(".equ N, 5\nS_ADDI_INT gp1, gp0, N\n", hw)
    assert a.words[0, 5] == 3 and b.words[0, 5] == 5
    for _ in range(2):  # the warning is reported every time, memo or not
        p = NPU.assemble("S_ADDI_INT gp0, gp0, 1\n", hw)
        assert [w.code for w in p.warnings] == ["W001"]
    z = NPU.assemble("S_LI_FP f1, 0.0\nS_LI_FP f2, -0.0\n", hw).words
    assert z[0, 4] == 0 and z[1, 4] == int(np.array(-0.0, np.float32).view(np.int32))
    with pytest.raises(AssemblyError):  # an error is never memoised into a success
        NPU.assemble("S_ADDI_INT gp1, gp0, 99999999\n", hw)
    with pytest.raises(AssemblyError):
        NPU.assemble("S_ADDI_INT gp1, gp0, 99999999\n", hw)


def test_the_memo_is_bounded(monkeypatch):
    hw = NPU.make_hw()
    monkeypatch.setattr(assembler, "ASSEMBLY_MEMO_ENTRIES", 8)
    monkeypatch.setattr(assembler, "LINE_MEMO_ENTRIES", 8)
    for i in range(40):
        NPU.assemble(f"S_ADDI_INT gp1, gp0, {i}\n", hw)
        NPU.assemble(f".equ Q, 1\nS_ADDI_INT gp1, gp0, {i}\n", hw)  # a directive: the general path and its memos
    t = assembler._tables(_isa(NPU, hw))
    assert max(len(t.parsed), len(t.checked), len(t.rows), len(t.lines)) <= 8
    assert len(t.lines) > 0
