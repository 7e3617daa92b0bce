"""The one "did you mean": near misses found, hostile words bounded."""

import time

from kcgym.suggest import closest, did_you_mean


def test_near_miss_and_case():
    assert closest("matmull", ["matmul", "gemv"]) == "matmul"
    assert closest("NPU", ["npu", "vliw"]) == "npu"
    assert did_you_mean("relu", ["relu6"]) == " (did you mean 'relu6'?)"
    assert did_you_mean("zzzz", ["matmul"]) == ""


def test_hostile_words_are_bounded():
    t = time.perf_counter()
    assert closest("x" * 1_000_000, ["x" * 999_999]) is None
    assert closest("a" * 60, ["a" * 59 + str(i) for i in range(100_000)]) is not None
    assert time.perf_counter() - t < 2.0
    assert closest("", ["a"]) is None
