"""JAX's persistent compilation cache, so each interpreter compiles once per machine, not per process."""

from __future__ import annotations

import os
from pathlib import Path

_enabled = False


def enable_persistent_cache() -> None:
    """Point JAX at ``$KCGYM_CACHE_DIR/jax`` (default ``~/.cache/kcgym/jax``); idempotent, never fatal."""
    global _enabled
    if _enabled:
        return
    _enabled = True
    import jax

    root = Path(os.environ.get("KCGYM_CACHE_DIR", Path.home() / ".cache" / "kcgym"))
    try:
        (root / "jax").mkdir(parents=True, exist_ok=True)
        jax.config.update("jax_compilation_cache_dir", str(root / "jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    except Exception:  # a read-only home must not break simulation
        pass
