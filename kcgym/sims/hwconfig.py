"""Hardware configs as users see them: each field's default, meaning, bounds and constraints, and bad overrides.

The pydantic models in ``kcgym/sims/*/config.py`` are the single source: :func:`hw_field` records a
field's meaning, its :class:`Bound` (every field has one, so that no override can ask for a machine the
simulator cannot hold) and its constraints on the model, :func:`fields_table` renders them (``kcgym docs
ACC --hw`` and the README), and :func:`override_error` turns pydantic's structured error data (never its
rendered text) into kcgym's one wording for unknown names: did you mean, and the valid names.

Bounds are checked field by field before the model validator runs (so a relation check or a size
product never sees a hostile value), then :meth:`HWConfig.state_bytes` (what the simulator will
allocate for the machine) is checked against ``kcgym.limits.MAX_MACHINE_STATE_BYTES``: every check
happens when the config is made, before any allocation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from kcgym.limits import MAX_HW_CYCLES, MAX_HW_ENTRIES, MAX_MACHINE_STATE_BYTES
from kcgym.registry import unknown_name_message

MIB = 1 << 20
STATE_BUDGET = f"the simulated machine state is at most {MAX_MACHINE_STATE_BYTES // MIB} MiB, " \
    "kcgym.limits.MAX_MACHINE_STATE_BYTES"


class Bound(NamedTuple):
    """The closed range ``lo..hi`` of one hw field, and why ``hi`` is where it is (said in the error)."""

    lo: int
    hi: int
    why: str


def memory_bound(unit_bytes: int, lo: int = 1, what: str = "unit") -> Bound:
    """A size in units of ``unit_bytes`` simulator bytes: at most the whole state budget of them."""
    why = f"{STATE_BUDGET}, and one {what} takes at least {unit_bytes} bytes"
    return Bound(lo, MAX_MACHINE_STATE_BYTES // unit_bytes, why)


def tile_bound(lo: int = 1) -> Bound:
    """A matrix dimension n whose n x n tile of fp32 words must fit the state budget."""
    return Bound(lo, 1 << (math.isqrt(MAX_MACHINE_STATE_BYTES // 4).bit_length() - 1),
                 f"{STATE_BUDGET}, and one n x n tile of 4-byte words must fit it")


def cycles_bound(lo: int = 1) -> Bound:
    """A latency, penalty or occupancy."""
    return Bound(lo, MAX_HW_CYCLES, "a sanity cap on one latency or occupancy (kcgym.limits.MAX_HW_CYCLES)")


def bandwidth_bound() -> Bound:
    """Bytes per cycle: moving more than the whole machine state in one cycle means nothing."""
    return Bound(1, MAX_MACHINE_STATE_BYTES, f"{STATE_BUDGET}: more per cycle than the whole state means nothing")


def entries_bound(lo: int = 1) -> Bound:
    """Entries of a small structure the simulator scans every step (a queue, the loop stack, the banks)."""
    return Bound(lo, MAX_HW_ENTRIES, "a sanity cap on a structure scanned every step (kcgym.limits.MAX_HW_ENTRIES)")


DEFAULT_BOUND = Bound(0, MAX_MACHINE_STATE_BYTES, STATE_BUDGET)  # an int field of an HWConfig declared without one


def _short(value: Any, limit: int = 40) -> str:
    """``repr`` of a hostile input, cut (a 5,000-digit integer is not repeated in the error)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


class HWConfig(BaseModel):
    """The base of every machine's hardware config: frozen, unknown fields rejected, bounded, shared range checks.

    A subclass declares its fields with :func:`hw_field` and overrides :meth:`state_parts` with what its
    simulator allocates; the bounds and the state budget are then checked here, before its own validator.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool) and cls.model_fields[str(info.field_name)].annotation is int:  # not True as 1
            raise ValueError(f"{info.field_name} takes an integer, got {value!r}")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _within_bound(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):  # a flag or a choice: its type is its bound
            return value
        lo, hi, why = bound_of(cls, str(info.field_name)) or DEFAULT_BOUND
        if value < lo:
            raise ValueError(f"{info.field_name} must be at least {lo}, got {_short(value)}")
        if value > hi:
            raise ValueError(f"{info.field_name} must be at most {hi:,} ({why}), got {_short(value)}")
        return value

    @model_validator(mode="after")
    def _within_state_budget(self) -> HWConfig:
        parts = self.state_parts()
        total = sum(parts.values())
        if total > MAX_MACHINE_STATE_BYTES:
            big = sorted(((v, k) for k, v in parts.items() if v >= MIB // 10), reverse=True)
            detail = ", ".join(f"{k} {v / MIB:,.1f} MiB" for v, k in big)
            raise ValueError(f"this config's simulated machine state is {total / MIB:,.1f} MiB ({detail}); at most "
                             f"{MAX_MACHINE_STATE_BYTES // MIB} MiB (kcgym.limits.MAX_MACHINE_STATE_BYTES): shrink "
                             "those fields")
        return self

    def state_parts(self) -> dict[str, int]:
        """Bytes the simulator allocates per input set for this config, by part (named by its fields)."""
        return {}

    def state_bytes(self) -> int:
        return sum(self.state_parts().values())

    def require_positive(self, names: Iterable[str]) -> None:
        for name in names:
            value = getattr(self, name)
            if value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")

    def require_power_of_two(self, names: Iterable[str]) -> None:
        for name in names:
            value = getattr(self, name)
            if value <= 0 or value & (value - 1):
                raise ValueError(f"{name} must be a positive power of two, got {value}")


def hw_field(default: int, meaning: str, constraints: str = "", bound: Bound = DEFAULT_BOUND) -> Any:
    """A config field: its meaning (the description), bound (checked per field) and constraints (checked by the
    model's validator). The bound is also the JSON schema's ``minimum`` / ``maximum``."""
    if not bound.lo <= default <= bound.hi:
        raise ValueError(f"the default {default} is outside its bound {bound.lo}..{bound.hi}")
    extra: dict[str, Any] = {"minimum": bound.lo, "maximum": bound.hi, "bound_why": bound.why}
    if constraints:
        extra["constraints"] = constraints
    return Field(default, description=meaning, json_schema_extra=extra)


def bound_of(model: type[BaseModel], name: str) -> Bound | None:
    """The :class:`Bound` a field was declared with by :func:`hw_field`; None for a plain pydantic field."""
    extra = model.model_fields[name].json_schema_extra
    if not isinstance(extra, dict) or "maximum" not in extra:
        return None
    return Bound(int(extra["minimum"]), int(extra["maximum"]), str(extra["bound_why"]))  # type: ignore[arg-type]


def fields(model: type[BaseModel]) -> list[dict[str, Any]]:
    """``{name, default, meaning, constraints}`` per field, in declaration order; constraints start with the bound."""
    rows = []
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        bound = bound_of(model, name)
        rows.append({
            "name": name, "default": info.default, "meaning": info.description or "",
            "constraints": "; ".join(x for x in (f"{bound.lo:,}..{bound.hi:,}" if bound else "",
                                                 str(extra.get("constraints", ""))) if x),
        })
    return rows


def fields_table(model: type[BaseModel]) -> str:
    """A Markdown table of the fields (the README embeds exactly this; a test keeps them equal)."""
    out = ["| field | default | meaning | constraints |", "|---|---|---|---|"]
    for r in fields(model):
        out.append(f"| `{r['name']}` | {r['default']} | {r['meaning']} | {r['constraints'] or '-'} |")
    return "\n".join(out)


def override_error(accelerator: str, model: type[BaseModel], error: ValidationError) -> str:
    """One line per problem of a ``hw=`` override, from pydantic's error data."""
    valid = list(model.model_fields)
    problems = []
    for err in error.errors(include_url=False):
        loc = ".".join(str(x) for x in err.get("loc", ()))
        if err["type"] == "extra_forbidden":
            problems.append(unknown_name_message(f"{accelerator} hw field", loc, valid))
        elif err["type"] == "value_error":  # the model validator: a relation between fields
            problems.append(str(err.get("ctx", {}).get("error", err["msg"])))
        elif loc:
            problems.append(f"hw field {loc!r}: {err['msg'].lower()}, got {_short(err.get('input'))}")
        else:
            problems.append(f"{err['msg'].lower()}, got {_short(err.get('input'))}")
    return f"invalid {accelerator} hw config: " + "; ".join(problems)
