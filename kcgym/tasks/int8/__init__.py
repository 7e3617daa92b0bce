"""The int8 task family: the paper's Coral task set, exact integer references (``numerics = "int8"``).

Same task names as the bf16 family; int8 tensors (int32 biases and exp table), int32
accumulation, documented requantisation, nonlinear functions exact in integer arithmetic or
through lookup tables supplied in memory, and an exact-match tolerance.
"""

from __future__ import annotations

from kcgym.tasks.base import Task
from kcgym.tasks.int8.conv import Conv2DInt8, ConvBlockInt8, DepthwiseConvInt8
from kcgym.tasks.int8.elementwise import GELUInt8, ReLUInt8, SiLUInt8
from kcgym.tasks.int8.matrix import BatchMatMulInt8, GEMMInt8, GEMVInt8, LinearInt8
from kcgym.tasks.int8.mlp import FFNInt8, SwiGLUInt8
from kcgym.tasks.int8.rowwise import LayerNormInt8, RMSNormInt8, SoftmaxInt8

_ALL: tuple[Task, ...] = (
    SiLUInt8(), ReLUInt8(), GELUInt8(), SoftmaxInt8(), LayerNormInt8(), RMSNormInt8(), GEMVInt8(), GEMMInt8(),
    BatchMatMulInt8(), LinearInt8(), Conv2DInt8(), DepthwiseConvInt8(), FFNInt8(), SwiGLUInt8(), ConvBlockInt8(),
)
TASKS: dict[str, Task] = {t.name: t for t in _ALL}

__all__ = ["TASKS"]
