"""The package's layers point one way: no import cycle inside ``kcgym/``, and no ``baselines`` import.

The graph is read statically (``ast``), so it sees every import whichever code path runs: the imports
at module level, and the lazy ones inside functions (a lazy import that closes a cycle is still a
cycle, only one Python forgives at import time). Imports under ``if TYPE_CHECKING:`` are not edges:
they never run. An edge ``a -> b`` points at the most specific module named (``from kcgym.envs import
docsearch`` is an edge to ``kcgym.envs.docsearch``; parent packages are not edges, as importing
``kcgym.x`` from inside ``kcgym`` is no cycle).

:data:`ALLOWED_LAZY` is the short list of lazy edges that may close a cycle, each with its reason.
An entry that no longer exists in the code fails the test too, so the list cannot go stale.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kcgym"

# (importer, imported): lazy edges allowed to close a cycle, each with the reason it is lazy today.
ALLOWED_LAZY: dict[tuple[str, str], str] = {}  # none today
# Not edges, by design: the registries' late binding by string (kcgym.registry's accelerator table,
# kcgym.agents' "module:attr" rows, kcgym.tasks' families), resolved with importlib at first lookup.
# That is why tasks/__init__ -> registry (lazy) closes no cycle here although the registry, once it
# resolves a machine, imports simulators that import kcgym.tasks.base.

# The layers, bottom first (the README's architecture section): an import may point down or sideways, never
# up. A module belongs to the longest prefix listed; ``kcgym`` itself is the package's front door only.
LAYERS: tuple[tuple[str, ...], ...] = (
    # constants and helpers
    ("kcgym.limits", "kcgym.suggest", "kcgym.seeding", "kcgym.extras", "kcgym.discovery", "kcgym.text"),
    ("kcgym.isa",),  # the assembler framework
    ("kcgym", "kcgym.tasks", "kcgym.sims", "kcgym.registry"),  # tasks, machines, the env-id table
    ("kcgym.evaluation",),  # the one scoring path
    ("kcgym.envs",),  # the env and its tools
    ("kcgym.scoring", "kcgym.scoring_workers", "kcgym.integrations", "kcgym.eval", "kcgym.agents"),  # users of the env
    ("kcgym.cli",),
)

# The one module that may name ``baselines`` (under TYPE_CHECKING only: it resolves agents by string).
AGENT_REGISTRY = "kcgym.agents"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """Absolute names an import statement brings in (``from m import a`` gives ``m`` and ``m.a``)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:  # relative: resolve against the importing module's package
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target] + [f"{target}.{a.name}" for a in node.names]


def imports(module: str) -> list[tuple[list[str], bool, int]]:
    """``(imported names, lazy, line)`` per import statement of ``module`` that runs (not TYPE_CHECKING)."""
    path = MODULES[module]
    found: list[tuple[list[str], bool, int]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.orelse:
                    visit_stmt(stmt, lazy)
                continue
            visit_stmt(child, lazy)

    def visit_stmt(node: ast.AST, lazy: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((_imported(node, module, path.name == "__init__.py"), lazy, node.lineno))
            return
        inner = lazy or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        visit(node, inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return found


def _target(name: str) -> str | None:
    """The most specific kcgym module a dotted name refers to (``kcgym.x.Class`` -> ``kcgym.x``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(importer: str, names: list[str]) -> set[str]:
    """The modules one import statement runs: the named module and each package above it that does not
    contain ``importer`` (a package's own ``__init__`` is already running when its modules import each other)."""
    out: set[str] = set()
    for name in names:
        t = _target(name) if name.startswith("kcgym") else None
        while t is not None and t != importer and not importer.startswith(t + "."):
            out.add(t)
            t = t.rpartition(".")[0] or None
    return out


def graph() -> dict[str, dict[str, tuple[bool, int]]]:
    """importer -> {imported kcgym module: (lazy, line)}; a module-level import wins over a lazy one."""
    edges: dict[str, dict[str, tuple[bool, int]]] = {m: {} for m in MODULES}
    for m in MODULES:
        for names, lazy, line in imports(m):
            for t in _targets(m, names):
                prev = edges[m].get(t)
                if prev is None or (prev[0] and not lazy):
                    edges[m][t] = (lazy, line)
    return edges


def cycles(edges: dict[str, dict[str, tuple[bool, int]]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def describe(comp: list[str], edges: dict[str, dict[str, tuple[bool, int]]]) -> str:
    members = set(comp)
    lines = [
        f"  {a} -> {b} ({'lazy' if lazy else 'module-level'}, line {line})"
        for a in comp for b, (lazy, line) in sorted(edges[a].items()) if b in members
    ]
    return "import cycle among " + ", ".join(comp) + ":\n" + "\n".join(lines)


def test_no_import_cycles_inside_kcgym():
    edges = graph()
    for (a, b) in ALLOWED_LAZY:
        if b in edges.get(a, {}) and edges[a][b][0]:
            del edges[a][b]
    found = cycles(edges)
    assert not found, "\n\n".join(describe(c, edges) for c in found)


@pytest.mark.parametrize("edge", sorted(ALLOWED_LAZY), ids=lambda e: f"{e[0]}->{e[1]}")
def test_allow_list_entries_are_live_lazy_edges(edge: tuple[str, str]):
    """An allow-listed edge must still exist, be lazy, and still close a cycle; otherwise drop the entry."""
    a, b = edge
    edges = graph()
    assert b in edges.get(a, {}), f"{a} no longer imports {b}: remove {edge} from ALLOWED_LAZY"
    assert edges[a][b][0], f"{a} imports {b} at module level: that cycle cannot be allow-listed"
    assert any(a in c and b in c for c in cycles(edges)), f"{a} -> {b} closes no cycle now: remove {edge}"


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            matches = module == p if p == "kcgym" else (module == p or module.startswith(p + "."))
            if matches and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return None if best is None else best[0]


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_layers_point_one_way():
    edges = graph()
    upward = [
        f"{a} (layer {layer_of(a)}) -> {b} (layer {layer_of(b)}), {'lazy' if lazy else 'module-level'} line {line}"
        for a, targets in edges.items()
        for b, (lazy, line) in targets.items()
        if (layer_of(b) or 0) > (layer_of(a) or 0) and not (lazy and _allowed(a, b))
    ]
    assert not upward, "imports pointing up a layer:\n" + "\n".join(upward)


def _allowed(a: str, b: str) -> bool:
    """An allow-listed lazy edge (``kcgym.envs`` stands for the package and its modules)."""
    return any(a == x and (b == y or b.startswith(y + ".")) for x, y in ALLOWED_LAZY)


def test_kcgym_never_imports_baselines():
    """The agents enter the package only as ``"module:attr"`` strings resolved by kcgym.agents."""
    offenders = [
        f"{m}:{line} imports {names[0]}"
        for m in MODULES
        for names, _lazy, line in imports(m)
        if names[0] == "baselines" or names[0].startswith("baselines.")
    ]
    assert not offenders, "\n".join(offenders)


def test_the_cycle_finder_finds_a_cycle():
    """The checker itself can fail: a planted two-module cycle and a lazy one are found."""
    edges = {"a": {"b": (False, 1)}, "b": {"a": (True, 3)}, "c": {"a": (False, 1)}}
    assert cycles(edges) == [["a", "b"]]
    assert "b -> a (lazy, line 3)" in describe(["a", "b"], edges)


def test_type_checking_imports_are_not_edges():
    agents = {name for names, _, _ in imports(AGENT_REGISTRY) for name in names}
    assert agents and not any(n.startswith("baselines") for n in agents)  # its baselines import is TYPE_CHECKING


def test_parent_packages_are_edges_from_outside_only():
    """``kcgym.sims.npu.x`` importing ``kcgym.tasks.base`` runs ``kcgym/tasks/__init__`` too; a module
    importing a sibling does not re-run its own package."""
    assert _targets("kcgym.sims.npu.isa", ["kcgym.tasks.base"]) == {"kcgym.tasks.base", "kcgym.tasks"}
    assert _targets("kcgym.tasks.base", ["kcgym.tasks.compare"]) == {"kcgym.tasks.compare"}
