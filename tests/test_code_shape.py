"""The shape the code keeps so one can change it in an afternoon (issue 33): no import cycle between
core modules (grimp counts imports under TYPE_CHECKING and inside functions too), no function over 80
lines and no module over 450 lines. The one exception is the first migration, a frozen schema
snapshot that is never edited."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1] / "spar_desktop"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 450
FROZEN = {PACKAGE / "core" / "migrations" / "versions" / "0001_release_0_1_0.py"}


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p not in FROZEN)


def _cycles(adjacency: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in adjacency:
        if root in index:
            continue
        work = [(root, iter(adjacency[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(adjacency.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_core_modules() -> None:
    graph = grimp.build_graph("spar_desktop")
    core = [m for m in graph.modules if m.startswith("spar_desktop.core.")]
    adjacency = {m: sorted(x for x in graph.find_modules_directly_imported_by(m) if x.startswith("spar_desktop.core."))
                 for m in core}
    assert _cycles(adjacency) == []


def test_the_cycle_finder_sees_a_cycle() -> None:
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]


def test_no_function_over_80_lines() -> None:
    long = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_no_module_over_450_lines() -> None:
    big = [f"{p.relative_to(PACKAGE.parent)} ({n} lines)" for p in _sources()
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert big == []
