"""What every JAX interpreter of kcgym shares: bf16 rounding, shape buckets and the batched runner.

An interpreter compiles once per (hardware config, shape bucket), never per program: memory
images and programs are padded to a :func:`bucket`, and :func:`batched_runner` jits one
machine's ``run_one`` vmapped over input sets (the program, the limits and the step budget are
shared by the batch).

That compile is the cold start of a short program: the NPU and VLIW dispatch short programs to their
interpreter, whose first compile (a ``lax.switch`` over every opcode class, unrolled per iteration) takes
several times the CPU seconds of the trace path's data runner (``benchmarks/results/speed.jsonl``, the
``cold_process`` rows of NPU matmul C1 and VLIW relu C1), which gives the same results bit for bit.
:data:`COLD_START` keeps short programs on the trace path until enough of them have run in the process
to pay for the interpreter's compile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from kcgym.limits import MAX_COLD_START_SHAPES
from kcgym.sims.jax_cache import enable_persistent_cache


def bf16(x: jax.Array) -> jax.Array:
    """``x`` rounded to bfloat16 (round to nearest even), kept as float32."""
    return x.astype(jnp.bfloat16).astype(jnp.float32)


def bucket(n: int, minimum: int) -> int:
    """Next power of two >= max(n, minimum): programs and memory images compile per bucket."""
    size = minimum
    while size < n:
        size *= 2
    return size


def round_up(n: int, multiple: int) -> int:
    """``n`` rounded up to a multiple of ``multiple``, at least one ``multiple`` (not a power-of-two bucket)."""
    return max(multiple, -(-n // multiple) * multiple)


def batched_runner(machine: Any, batched: tuple[int | None, ...]) -> tuple[Any, Callable[..., Any]]:
    """``(machine, jit(vmap(machine.run_one)))``: ``batched`` marks each argument batched (0) or shared (None)."""
    enable_persistent_cache()
    return machine, jax.jit(jax.vmap(machine.run_one, in_axes=batched))


# Short programs of one shape (a dispatch that would pick the interpreter) taken by the trace path in this
# process before the interpreter is compiled for that shape. Break-even: the interpreter's compile (seconds
# of CPU, less where JAX's persistent cache holds it: it is still traced and loaded) over what it saves per
# distinct short program (the C1 rows of speed_crossover.jsonl: about a millisecond): thousands of runs.
INTERPRETER_AFTER_SHORT_RUNS = 1000


class ColdStart:
    """Per interpreter shape (``key``: config and argument shapes), whether this process has compiled the
    interpreter, and how many short programs have taken the trace path while it has not."""

    READY = -1

    def __init__(self) -> None:
        self._runs: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def trace_instead(self, key: Hashable, mode: str, short: Callable[[], bool]) -> bool:
        """True where this run should take the trace path though the dispatch would pick the interpreter:
        ``mode`` is ``auto`` (``KCGYM_SIM``), the program is ``short()`` and the interpreter for ``key`` is
        not compiled yet and has not been worth compiling. ``oracle`` runs compile it (noted here)."""
        if mode == "oracle":
            self.compiled(key)
        if mode != "auto":
            return False
        with self._lock:
            runs = self._runs.get(key, 0)
            if runs == self.READY or not short():
                return False
            self._note(key, self.READY if runs >= INTERPRETER_AFTER_SHORT_RUNS else runs + 1)
            return runs < INTERPRETER_AFTER_SHORT_RUNS  # else the caller's interpreter run compiles it

    def run(self, trace: Any, threshold: int, hw_json: str, args: tuple, runner: Callable[..., Any]) -> Any:
        """A machine's dispatch (``runner(*args)``; ``args[0]``: the padded program words), with a short
        program taking the trace path (``trace.run(hw_json, *args)``) while its interpreter is cold. ``trace``:
        the machine's trace module (``run``, ``sim_mode``, ``dynamic_count``); ``threshold``: its dispatch's
        most dynamic instructions for the interpreter. The trace path's state is numpy, the interpreter's on
        the device (the caller fetches what it reads)."""
        words = args[0]
        key = (hw_json, *(np.shape(a) for a in args))
        if self.trace_instead(key, trace.sim_mode(), lambda: trace.dynamic_count(words, threshold) <= threshold):
            st = trace.run(hw_json, *args)
            if st is not None:
                return st
            self.compiled(key)  # the trace path left it to the interpreter
        return runner(*args)

    def compiled(self, key: Hashable) -> None:
        with self._lock:
            self._note(key, self.READY)

    def _note(self, key: Hashable, value: int) -> None:
        self._runs.pop(key, None)
        if len(self._runs) >= MAX_COLD_START_SHAPES:  # a hardware sweep makes one per config: the oldest go
            self._runs.pop(next(iter(self._runs)))
        self._runs[key] = value


COLD_START = ColdStart()
