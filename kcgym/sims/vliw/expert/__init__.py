"""Hand-optimised VLIW kernels: bundles packed, several vectors in flight, DMAs double-buffered.

Each module emits a kernel for every configuration of its tasks (or None where it has none).
They are readable references for agents and users, and regression tests of the timing model.
"""

from __future__ import annotations

from kcgym.sims.base import MemoryLayout
from kcgym.sims.vliw.config import VLIWConfig
from kcgym.sims.vliw.expert.conv import expert_conv
from kcgym.sims.vliw.expert.depthwise import expert_depthwise
from kcgym.sims.vliw.expert.gemv import expert_gemv
from kcgym.sims.vliw.expert.matmul import expert_matmul
from kcgym.sims.vliw.expert.mlp import expert_ffn, expert_swiglu
from kcgym.sims.vliw.expert.streaming import expert_streaming
from kcgym.tasks.base import Task, TaskConfig

EXPERTS = {
    **{name: expert_streaming for name in ("relu", "silu", "gelu", "softmax", "layernorm", "rmsnorm")},
    **{name: expert_matmul for name in ("matmul", "linear", "batch_matmul")},
    "gemv": expert_gemv,
    "depthwise_conv": expert_depthwise,
    **{name: expert_conv for name in ("conv2d", "conv_block")},
    "ffn": expert_ffn,
    "swiglu": expert_swiglu,
}


def expert_kernel(task: Task, cfg: TaskConfig, hw: VLIWConfig, layout: MemoryLayout) -> str | None:
    """The expert kernel for ``task`` at ``cfg``, or None where none exists."""
    fn = EXPERTS.get(task.name)
    return None if fn is None else fn(task, cfg, hw, layout)
