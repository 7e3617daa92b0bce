"""The types of the task manifest: what one declarative task entry holds, and its shape expressions.

Kept apart from the task contract (``base.py``) and free of NumPy and pydantic, so that the
registry can read the manifest (which tasks run where) while ``import kcgym`` stays light.
A shape is written as an expression over a configuration's parameters (``"M, K"``,
``"k, k, cin, cout"``, ``"n / hidden"``), evaluated by :func:`evaluate` — integers, names and
``+ - * // /`` only, where ``/`` must divide exactly.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Role = Literal["input", "output"]
DTYPES = ("bf16", "int8", "int32")  # the element types a tensor may declare

ConfigRows = tuple[Mapping[str, int], ...]  # C1..C5 parameter dicts of one machine


@dataclass(frozen=True)
class Tolerance:
    """Element ``i`` matches iff ``|a - e| <= atol + rtol * |e|`` (and both are finite)."""

    atol: float
    rtol: float


@dataclass(frozen=True)
class TensorDecl:
    """One tensor of a task: ``shape`` and ``description`` are written over the config's parameters.

    ``description`` is a ``str.format`` template (``"{n} bf16 elements"``) over the same names.
    A ``constant`` input is the same in every input set (a lookup table, a fixed permutation).
    """

    name: str
    shape: str
    role: Role
    description: str = ""
    dtype: str = "bf16"
    constant: bool = False


@dataclass(frozen=True)
class Variant:
    """A task in one number format (``"bf16"``, ``"int8"``): its reference class, tensors, shapes, tolerance.

    ``shapes`` maps each machine that runs this variant to its C1..C5; ``derived`` names more
    values (``rows = n / hidden``) that tensor shapes and descriptions may use.
    """

    reference: str  # "module:Class" of the task class (the reference implementation)
    category: str
    tensors: tuple[TensorDecl, ...]
    shapes: Mapping[str, ConfigRows]
    tolerance: Tolerance
    domain: Mapping[str, str] = field(default_factory=dict)  # input tensor -> its stated domain
    derived: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskEntry:
    """One task of the suite: identity, its variants per number format, and the machines that lack it.

    ``paper_id`` is the task's number in the paper's Table 4 (None for a task the paper only
    names in its prose). ``unsupported`` maps a machine to the reason it has no such env, as
    the paper's Table 5 marks unsupported cells.
    """

    name: str  # env-id form, e.g. "matmul"
    title: str  # paper form, e.g. "GEMM"
    level: int  # 1 primitive, 2 composite, 3 end-to-end
    paper_id: int | None
    variants: Mapping[str, Variant]
    unsupported: Mapping[str, str] = field(default_factory=dict)
    # tool calls per episode where the task set has budgets of its own (the CPU case study: 10/10/15);
    # None: the paper's per-level default for the ML tasks (kcgym.envs.kernel_env.DEFAULT_MAX_TURNS)
    max_turns: int | None = None

    def machines(self) -> list[str]:
        """The machines that run this task, in the order its variants list them."""
        return [m for v in self.variants.values() for m in v.shapes]

    def variant_on(self, machine: str) -> tuple[str, Variant] | None:
        """``(number format, variant)`` that ``machine`` runs, or None where it does not run this task."""
        for family, variant in self.variants.items():
            if machine in variant.shapes:
                return family, variant
        return None


def configs(names: str, *rows: tuple[int, ...]) -> ConfigRows:
    """C1..C5 from a parameter-name line and one value tuple per config: ``configs("M N", (64, 512), ...)``."""
    keys = names.split()
    for row in rows:
        if len(row) != len(keys):
            raise ValueError(f"config {row} does not give one value for each of {keys}")
    return tuple(dict(zip(keys, row, strict=True)) for row in rows)


def _exact_div(a: int, b: int) -> int:
    if b == 0 or a % b:
        raise ValueError(f"{a} is not a multiple of {b}")
    return a // b


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Div: _exact_div}


def _eval(node: ast.AST, names: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"shape {text!r}: unknown name {node.id!r}; known: {', '.join(names)}")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left, names, text), _eval(node.right, names, text))
    raise ValueError(f"shape {text!r}: only integers, names and + - * // / are allowed")


def evaluate(text: str, names: Mapping[str, int]) -> tuple[int, ...]:
    """The integer tuple that ``text`` (``"M, K"`` or ``"n / hidden"``) denotes under ``names``."""
    tree = ast.parse(text.strip(), mode="eval").body
    items = tree.elts if isinstance(tree, ast.Tuple) else [tree]
    return tuple(_eval(item, names, text) for item in items)


def resolve(variant: Variant, params: Mapping[str, int]) -> dict[str, int]:
    """The config's parameters with the variant's derived values added (in declaration order)."""
    names = dict(params)
    for name, text in variant.derived.items():
        (names[name],) = evaluate(text, names)
    return names
