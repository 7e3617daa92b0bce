"""The optional dependency groups (pyproject's extras) and the one install hint for each.

``--help``, error messages and the README say the same command; this module imports nothing, so
the CLI's help stays fast.
"""

from __future__ import annotations

RAY_INSTALL_HINT = "pip install -e '.[ray]'"  # kcgym eval --backend ray
