"""Vector envs: ``gym.make_vec(id, num_envs=N, vectorization_mode="sync"|"async")`` for every kcgym id.

Gymnasium batches ``info`` per key into an array typed by the first sub-env that reports the key
(an ``int`` array for ``568``, an object array for text or lists, a nested batch for a dict), and a
mask ``_key`` saying which sub-envs reported it. Sub-envs at different points of their episodes
report the same key in the same step, so a kcgym info keeps one type per key (:func:`stable_info`,
applied to every ``reset`` and ``step`` info):

- a number, a flag or a dict is always of its one type, or **absent** when the step did not measure it
  (``cycles`` of a kernel that did not assemble, ``speedup`` of an incorrect one, ``fault`` of a clean
  run): ``None`` next to ``568`` cannot be stored in the ``int`` array, and Gymnasium's mask already
  says "this sub-env has no value";
- text keys (:data:`TEXT_KEYS`) keep ``None`` (no error, no tool): text batches as an object array,
  where ``None`` fits;
- lists are left as they are (object arrays);
- a ``float`` key never carries an ``int`` (which would make an ``int`` array truncate later floats).

So Gymnasium's own ``SyncVectorEnv`` / ``AsyncVectorEnv`` stack kcgym infos unpatched (tested).

No native ``vector_entry_point`` is registered: sub-envs run different kernels, and a
simulator batches input sets of *one* program, so there is no cross-env simulation to fuse
(``benchmarks/bench_vector_env.py`` measures sync against async instead).
"""

from __future__ import annotations

from typing import Any

# Keys whose value is text or None, at any depth of an info (None stays: object arrays hold it).
TEXT_KEYS = frozenset({
    "tool", "tool_call_id", "error", "error_class", "sol_binding", "internal_error", "section", "query",
    "output", "source", "message", "name",
})
# Keys that are floats whenever present (an int value is stored as a float).
FLOAT_KEYS = frozenset({
    "match_rate", "speedup", "sol_share", "max_margin", "visible_score", "score",
})


def stable_info(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` with one type per key (see the module docstring); dicts are rebuilt, lists kept as is."""
    out: dict[str, Any] = {}
    for key, value in info.items():
        if value is None:
            if key in TEXT_KEYS:
                out[key] = None
            continue
        if isinstance(value, dict):
            value = stable_info(value)
        elif key in FLOAT_KEYS and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        out[key] = value
    return out


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
