"""Test-wide setup: JAX's persistent compilation cache lives in the temp dir, never in ~/.cache.

The directory persists across runs on one machine, so a second run does not recompile the
interpreters; set KCGYM_CACHE_DIR to choose another place.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("KCGYM_CACHE_DIR", str(Path(tempfile.gettempdir()) / "kcgym-test-cache"))
