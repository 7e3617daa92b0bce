"""Vector envs: ``gym.make_vec(id, num_envs=N, vectorization_mode="sync"|"async")`` for every kcgym id.

Gymnasium's vector envs batch ``info`` per key into an array whose dtype is fixed by the
first sub-env that reports the key. kcgym's info uses ``None`` for what a step did not
measure (``cycles`` of a kernel that did not assemble, ``speedup`` of an incorrect one,
``fault`` of a clean run), so sub-envs at different points of their episodes report ``568``
and ``None`` for the same key in the same step, and Gymnasium's batching raises
``TypeError: int() argument must be ... not 'NoneType'`` (or silently truncates a float
written into an int array). :func:`tolerate_mixed_info_types` makes that batching fall back
to an object array for such a key instead; it is installed when the first kcgym env is created
(``import kcgym`` stays light) and changes nothing for infos Gymnasium could already batch.

No native ``vector_entry_point`` is registered: sub-envs run different kernels, and a
simulator batches input sets of *one* program, so there is no cross-env simulation to fuse
(``benchmarks/bench_vector_env.py`` measures sync against async instead).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv

_MARK = "_kcgym_tolerant"


def _fits(array: np.ndarray, value: Any) -> bool:
    """Whether ``array[i] = value`` stores ``value`` faithfully (no error, no truncation)."""
    kind = array.dtype.kind
    if kind == "O":
        return True
    if isinstance(value, bool | np.bool_):
        return kind in "biuf"
    if isinstance(value, int | np.integer):
        return kind in "iuf"
    if isinstance(value, float | np.floating):
        return kind == "f"
    if isinstance(value, np.ndarray):
        return value.shape == array.shape[1:] and np.can_cast(value.dtype, array.dtype)
    return False


def _as_objects(array: np.ndarray) -> np.ndarray:
    out = np.full(array.shape[0], None, dtype=object)
    for i in range(array.shape[0]):
        out[i] = array[i]
    return out


def _prepare(vector_infos: dict[str, Any], env_info: dict[str, Any]) -> None:
    """Retype the batched arrays (and nested dicts) that ``env_info`` would not fit into."""
    for key, value in env_info.items():
        if key == "final_obs" or key not in vector_infos:
            continue
        batched = vector_infos[key]
        if isinstance(value, dict):
            if isinstance(batched, np.ndarray):  # only ``None``s so far: start the nested batch afresh
                vector_infos[key] = {}
            continue
        if isinstance(batched, dict):  # a sub-env without the nested info: nothing to record
            continue
        if isinstance(batched, np.ndarray) and not _fits(batched, value):
            vector_infos[key] = _as_objects(batched)


def tolerate_mixed_info_types() -> None:
    """Make Gymnasium's vector ``info`` batching fall back to object arrays for mixed-type keys.

    Idempotent. Values of ``None`` next to a nested dict (``fault``) are kept as the mask only.
    """
    original = VectorEnv._add_info
    if getattr(original, _MARK, False):
        return

    def _add_info(self: VectorEnv, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int):
        _prepare(vector_infos, env_info)
        skipped = {k: v for k, v in env_info.items() if v is None and isinstance(vector_infos.get(k), dict)}
        if skipped:
            env_info = {k: v for k, v in env_info.items() if k not in skipped}
        return original(self, vector_infos, env_info, env_num)

    setattr(_add_info, _MARK, True)
    _add_info.__doc__ = original.__doc__
    VectorEnv._add_info = _add_info  # type: ignore[method-assign]


def async_vector_kwargs(mode: str = "async") -> dict[str, Any]:
    """The ``vector_kwargs`` that ``gym.make_vec(..., vectorization_mode="async")`` needs for kcgym envs.

    - ``shared_memory=False``: Gymnasium reads a ``Text`` observation space from shared memory
      once, when the vector env is built, so every later observation would be stale; pipes work.
    - ``context="spawn"``: JAX is multithreaded, and a process forked after JAX has started can
      deadlock in its first simulation; spawned workers start clean (and load compiled
      simulators from the persistent cache).

    Returns ``{}`` for any other mode, so ``vector_kwargs=async_vector_kwargs(mode)`` is always valid.
    """
    if mode != "async":
        return {}
    return {"shared_memory": False, "context": "spawn"}
