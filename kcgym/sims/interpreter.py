"""What every JAX interpreter of kcgym shares: bf16 rounding, shape buckets and the batched runner.

An interpreter compiles once per (hardware config, shape bucket), never per program: memory
images and programs are padded to a :func:`bucket`, and :func:`batched_runner` jits one
machine's ``run_one`` vmapped over input sets (the program, the limits and the step budget are
shared by the batch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

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
