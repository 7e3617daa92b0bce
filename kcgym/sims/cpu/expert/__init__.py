"""Hand-written CPU kernels that beat GCC -O2 on the out-of-order model.

Each module emits a kernel for every configuration of its tasks (or None where it has none): readable
references for agents and users, and regression tests of the timing model (they must stay correct and
faster than the baseline). A new expert is a new module with its own ``EXPERTS`` table, found by
:mod:`kcgym.discovery`.
"""

from __future__ import annotations

from kcgym.discovery import collect, expert_dispatch

EXPERTS = collect(__name__, "EXPERTS")
expert_kernel = expert_dispatch(EXPERTS)  # (task, cfg, hw, layout) -> source, or None where no expert exists
