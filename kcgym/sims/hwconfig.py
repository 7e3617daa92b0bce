"""Hardware configs as users see them: each field's default, meaning and constraints, and bad overrides.

The pydantic models in ``kcgym/sims/*/config.py`` are the single source: :func:`hw_field` records a
field's meaning and constraints on the model, :func:`fields_table` renders them (``kcgym docs ACC
--hw`` and the README), and :func:`override_error` turns pydantic's structured error data (never its
rendered text) into kcgym's one wording for unknown names: did you mean, and the valid names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kcgym.registry import unknown_name_message


class HWConfig(BaseModel):
    """The base of every machine's hardware config: frozen, unknown fields rejected, shared range checks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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


def hw_field(default: int, meaning: str, constraints: str = "") -> Any:
    """A config field with its meaning (the description) and constraints (checked by the model's validator)."""
    return Field(default, description=meaning, json_schema_extra={"constraints": constraints} if constraints else None)


def fields(model: type[BaseModel]) -> list[dict[str, Any]]:
    """``{name, default, meaning, constraints}`` per field, in declaration order."""
    rows = []
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        rows.append({
            "name": name, "default": info.default, "meaning": info.description or "",
            "constraints": str(extra.get("constraints", "")),
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
            problems.append(f"hw field {loc!r}: {err['msg'].lower()}, got {err.get('input')!r}")
        else:
            problems.append(f"{err['msg'].lower()}, got {err.get('input')!r}")
    return f"invalid {accelerator} hw config: " + "; ".join(problems)
