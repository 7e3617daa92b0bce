"""kcgym: a Gymnasium suite for agentic kernel generation on simulated AI accelerators.

Importing the package registers every ``KernelCraft-<ACC>-<task>`` env with Gymnasium, so
``gym.make("KernelCraft-NPU-matmul")`` works after ``import kcgym``. Registration records
strings only; simulators (and JAX) are imported when an env is first made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcgym.registry import ACCELERATORS, ENV_IDS, SUPPORTED, env_id, register_all

if TYPE_CHECKING:
    from kcgym.tasks.base import Task

__version__ = "0.1.0"

register_all()

__all__ = ["ACCELERATORS", "ENV_IDS", "SUPPORTED", "TASKS", "__version__", "env_id", "register_all"]


def __getattr__(name: str) -> Any:
    # TASKS is imported on first use so that `import kcgym` stays light (PEP 562).
    if name == "TASKS":
        from kcgym.tasks import TASKS

        return TASKS
    raise AttributeError(f"module 'kcgym' has no attribute {name!r}")


if TYPE_CHECKING:
    TASKS: dict[str, Task]
