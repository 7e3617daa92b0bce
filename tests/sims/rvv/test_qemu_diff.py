"""Differential test: the JAX simulator against QEMU (GNU binutils + qemu-riscv32, RVV 1.0, VLEN=128).

Covers every mnemonic of the instruction table through generated instruction-level programs
(each result logged to memory, plus the final registers and memories), and the compiler's
kernels on real task inputs. Skips with the reason when the tools are not installed.
"""

from __future__ import annotations

import pytest

from kcgym.sims.rvv import isa as I
from kcgym.sims.rvv.qemu import unavailable_reason
from tests.sims.rvv import isa_programs as P
from tests.sims.rvv.qemu_diff import differences

pytestmark = pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
PROGRAMS = P.programs(seed=0)


def test_programs_cover_every_instruction():
    covered = set().union(*(m for _, m in PROGRAMS))
    assert covered == {s.mnemonic for s in I.INSTRUCTIONS}


@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_instruction_programs_match_qemu(k):
    source, mnemonics = PROGRAMS[k]
    diffs = differences(source, P.ext_image(k))
    assert not diffs, f"covering {sorted(mnemonics)}:\n" + "\n".join(diffs[:20])
