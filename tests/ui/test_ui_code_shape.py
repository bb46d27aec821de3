"""The UI stays readable in pieces (issue 33): no function over 80 lines and no module over 450
under spar_desktop/ui/ — long builders become named section builders, big widgets split by concern."""

from __future__ import annotations

import ast
from pathlib import Path

import spar_desktop.ui

UI = Path(spar_desktop.ui.__file__).parent
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 450


def _modules() -> list[Path]:
    return sorted(UI.rglob("*.py"))


def test_no_ui_module_is_over_450_lines():
    long = {str(p.relative_to(UI)): n for p in _modules() if (n := len(p.read_text(encoding="utf-8").splitlines()))
            > MAX_MODULE_LINES}
    assert long == {}


def test_no_ui_function_is_over_80_lines():
    long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(UI)}:{node.lineno} {node.name}"] = lines
    assert long == {}
