"""JAX's persistent compilation cache, so each interpreter compiles once per machine, not per process.

kcgym uses ``$KCGYM_CACHE_DIR/jax`` (default ``~/.cache/kcgym/jax``) only where the user has not chosen a
cache directory of their own (``JAX_COMPILATION_CACHE_DIR`` or ``jax.config.update(
"jax_compilation_cache_dir", ...)`` before the first simulation): a library must not move a setting that
belongs to the whole process.
"""

from __future__ import annotations

import os
from pathlib import Path

_enabled = False


def enable_persistent_cache() -> None:
    """Point JAX at kcgym's cache directory unless the user set one; idempotent, never fatal."""
    global _enabled
    if _enabled:
        return
    _enabled = True
    import jax

    try:
        if os.environ.get("JAX_COMPILATION_CACHE_DIR") or getattr(jax.config, "jax_compilation_cache_dir", None):
            return  # the user's choice stands (and so do their thresholds)
        root = Path(os.environ.get("KCGYM_CACHE_DIR", Path.home() / ".cache" / "kcgym"))
        (root / "jax").mkdir(parents=True, exist_ok=True)
        jax.config.update("jax_compilation_cache_dir", str(root / "jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    except Exception:  # a read-only home (or an older JAX without the option) must not break simulation
        pass
