"""The task registry: every task, one instance each, in the paper's task-id order.

Tasks come in *families* by number format. The bf16 family (:data:`TASKS`) serves the
floating-point machines; an integer machine (``Accelerator.numerics == "int8"``) gets its
own family with the same task names, exact references and integer inputs. An env resolves
its task through :func:`task_for`, so a family is added by one entry in :data:`_FAMILIES`.
"""

from __future__ import annotations

import difflib
import importlib

from kcgym.tasks.attention import GQA, MHA, MQA, SDPA, FlashAttention
from kcgym.tasks.base import Task
from kcgym.tasks.batch_matmul import BatchMatMul
from kcgym.tasks.conv2d import Conv2D
from kcgym.tasks.conv_block import ConvBlock
from kcgym.tasks.decoder import DecoderLLaMA, DecoderT5
from kcgym.tasks.depthwise_conv import DepthwiseConv
from kcgym.tasks.gelu import GELU
from kcgym.tasks.gemv import GEMV
from kcgym.tasks.layernorm import LayerNorm
from kcgym.tasks.linear import Linear
from kcgym.tasks.matmul import GEMM
from kcgym.tasks.mlp import FFN, SwiGLU
from kcgym.tasks.relu import ReLU
from kcgym.tasks.rmsnorm import RMSNorm
from kcgym.tasks.rope import RoPE
from kcgym.tasks.silu import SiLU
from kcgym.tasks.softmax import Softmax

_ALL: tuple[Task, ...] = (
    SiLU(),
    ReLU(),
    GELU(),
    Softmax(),
    LayerNorm(),
    RMSNorm(),
    GEMV(),
    GEMM(),
    BatchMatMul(),
    Linear(),
    Conv2D(),
    DepthwiseConv(),
    RoPE(),
    FFN(),
    SwiGLU(),
    SDPA(),
    FlashAttention(),
    MHA(),
    GQA(),
    MQA(),
    ConvBlock(),
    DecoderLLaMA(),
    DecoderT5(),
)

TASKS: dict[str, Task] = {t.name: t for t in _ALL}

# number format -> "module:attribute" of that family's ``name -> Task`` table (imported on first use)
_FAMILIES: dict[str, str] = {
    "bf16": "kcgym.tasks:TASKS",
    "int8": "kcgym.tasks.int8:TASKS",
}


def tasks_for(numerics: str) -> dict[str, Task]:
    """The task table of one number format (``"bf16"``, ...)."""
    if numerics not in _FAMILIES:
        raise KeyError(f"no task family for number format {numerics!r}; known: {', '.join(_FAMILIES)}")
    module, _, attr = _FAMILIES[numerics].partition(":")
    return getattr(importlib.import_module(module), attr)


def task_for(accelerator: str, name: str) -> Task:
    """The task ``name`` as the accelerator ``accelerator`` (a registered name) runs it."""
    from kcgym.registry import ACCELERATORS, unknown_name_message

    numerics = getattr(ACCELERATORS[accelerator], "numerics", "bf16")
    table = tasks_for(numerics)
    if name not in table:
        raise KeyError(unknown_name_message("task", name, list(table)))
    return table[name]


def get_task(name: str) -> Task:
    """The task called ``name`` (env-id form, e.g. ``"matmul"``).

    Raises:
        KeyError: for an unknown name; the message lists the valid names and, where one is
            close (by name or paper title, e.g. ``"GEMM"``), suggests it.
    """
    task = TASKS.get(name)
    if task is not None:
        return task
    aliases = {t.name: t.name for t in _ALL} | {t.title.lower(): t.name for t in _ALL}
    close = difflib.get_close_matches(name.lower().replace("-", "_"), list(aliases), n=1, cutoff=0.6)
    hint = f" (did you mean {aliases[close[0]]!r}?)" if close else ""
    raise KeyError(f"unknown task {name!r}{hint}; valid tasks: {', '.join(TASKS)}")


__all__ = ["TASKS", "Task", "get_task", "task_for", "tasks_for"]
