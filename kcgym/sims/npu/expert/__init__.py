"""Hand-optimised NPU kernels: proof that the timing model rewards real optimisation.

Each module emits a kernel for every configuration of its task. They are readable
references for agents and users, and regression tests of the simulator's timing model.
A new expert is a new module with its own ``EXPERTS`` table, found by :mod:`kcgym.discovery`.
"""

from __future__ import annotations

from kcgym.discovery import collect, expert_dispatch

EXPERTS = collect(__name__, "EXPERTS")
expert_kernel = expert_dispatch(EXPERTS)  # (task, cfg, hw, layout) -> source, or None where no expert exists
