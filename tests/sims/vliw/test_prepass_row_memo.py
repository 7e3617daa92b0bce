"""The VLIW pre-pass's memo of decoded bundles (``trace._decoded``: each bundle's ``_decode`` entry and ``_records``
record, by config and bundle words, shared across programs): the same decode as ``_decode`` and ``_records`` of the
program alone, whatever the memo holds (other programs' bundles, at other pcs, a bundle differing by one field), the
same whole Trace, and the memo's bound."""

from __future__ import annotations

import numpy as np
import pytest

from kcgym.sims.vliw import machine as M
from kcgym.sims.vliw import trace
from kcgym.sims.vliw.accelerator import ACCELERATOR
from kcgym.sims.vliw.config import VLIWConfig
from tests.sims.vliw.test_prepass_block_cache import kernel
from tests.sims.vliw.test_prepass_blocks import HW, _words, assert_same_trace
from tests.sims.vliw.test_trace_differential import EXT_ELEMENTS, generated_program


@pytest.fixture(autouse=True)
def empty_memo(monkeypatch):
    monkeypatch.setattr(trace, "_ROW_MEMO", {})


def _alone(words: np.ndarray, hw: VLIWConfig = HW) -> tuple[list, list]:
    dec = trace._decode(M.Machine(hw), words)
    return dec, trace._records(dec, hw.dm_bytes)


def _memo_entries() -> int:
    return sum(len(m) for m in trace._ROW_MEMO.values())


def test_decode_is_the_programs_own_whatever_the_memo_holds():
    programs = [_words(ACCELERATOR.assemble(generated_program(seed), HW))[:80] for seed in range(8)]
    programs += [kernel(pad=pad)[:20] for pad in (0, 3)] + [kernel(inc=32)[:20]]
    machine = M.Machine(HW)
    for words in programs + programs[::-1]:  # (cold, then with every program's bundles in the memo)
        assert trace._decoded(machine, words, HW) == _alone(words)


def test_a_bundle_differing_by_one_field_is_decoded_anew():
    machine = M.Machine(HW)
    words = kernel()[:20]
    trace._decoded(machine, words, HW)
    n = _memo_entries()
    changed = words.copy()
    changed[8, 3] ^= 1  # (one operand field of one bundle)
    assert trace._decoded(machine, changed, HW) == _alone(changed)
    assert _memo_entries() == n + 1


def test_configs_do_not_share_entries():
    """A record holds the config's latencies and DM size: another config decodes the same words anew."""
    words = kernel()[:20]
    other = VLIWConfig(mul_latency=7, dm_bytes=32768)
    trace._decoded(M.Machine(HW), words, HW)
    assert trace._decoded(M.Machine(other), words, other) == _alone(words, other) != _alone(words)


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(trace, "ROW_MEMO_ENTRIES", 30)
    machine = M.Machine(HW)
    for seed in range(6):
        words = _words(ACCELERATOR.assemble(generated_program(seed), HW))[:25]
        assert trace._decoded(machine, words, HW) == _alone(words)
        assert _memo_entries() <= 30


@pytest.mark.parametrize("seed", range(6))
def test_whole_trace_with_a_warm_memo(seed):
    """The pre-pass of a program after others filled the memo (and of the same program again) is its cold one."""
    words = _words(ACCELERATOR.assemble(generated_program(seed), HW))
    cold = trace.prepass(words, HW, EXT_ELEMENTS, 100_000, 16384, seed % 2 == 0)
    for other in range(6):
        trace.prepass(_words(ACCELERATOR.assemble(generated_program(other), HW)), HW, EXT_ELEMENTS, 1000, 16384)
    assert_same_trace(trace.prepass(words, HW, EXT_ELEMENTS, 100_000, 16384, seed % 2 == 0), cold)
