"""DESIGN.md's numbered layer list ("How the code is layered") says what the importlinter layers
contract in pyproject.toml enforces: the same packages, in the same order, with the same siblings."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = "spar_desktop.core."
LAYERS_CONTRACT = "The core's layers: each package imports only from the layers below it"

Layer = tuple[frozenset[str], str]  # (package names under core, sibling separator: "|", ":" or "")


def contract_layers(pyproject: str) -> list[Layer]:
    """The layers contract's layers, top to bottom."""
    contracts = tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]
    [contract] = [c for c in contracts if c["name"] == LAYERS_CONTRACT]
    layers = []
    for layer in contract["layers"]:
        sep = "|" if "|" in layer else ":" if ":" in layer else ""
        names = [n.strip().removeprefix(CORE) for n in re.split(r"[|:]", layer)]
        layers.append((frozenset(names), sep))
    return layers


def design_layers(design: str, lock_modules: frozenset[str]) -> list[Layer]:
    """DESIGN's numbered list, top to bottom. A layer is its bold name ('**retrieval | tagging**');
    the last one, the shared leaves, lists its modules in backticks and says 'the lock modules'
    for every ``*_lock`` module of the contract."""
    section = design.split("## How the code is layered", 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^\d+\. (.*(?:\n {2,}.*)*)", section, re.M)
    layers: list[Layer] = []
    for item in items:
        bold = re.match(r"\*\*(.+?)\*\*", item)
        if bold:
            text = bold[1]
            sep = "|" if "|" in text else ":" if ":" in text else ""
            layers.append((frozenset(n.strip() for n in re.split(r"[|:]", text)), sep))
        else:  # the shared leaves, which may import each other
            names = set(re.findall(r"`(\w+)`", item))
            if "the lock modules" in item:
                names |= lock_modules
            layers.append((frozenset(names), ":"))
    return layers


def disagreements(design: str, pyproject: str) -> list[str]:
    contract = contract_layers(pyproject)
    locks = frozenset(n for names, _ in contract for n in names if n.endswith("_lock"))
    design_list = design_layers(design, locks)
    problems = []
    for i in range(max(len(contract), len(design_list))):
        want = contract[i] if i < len(contract) else None
        said = design_list[i] if i < len(design_list) else None
        if want != said:
            problems.append(f"layer {i + 1}: pyproject.toml has {want and sorted(want[0])} ({want and want[1]!r}), "
                            f"DESIGN.md has {said and sorted(said[0])} ({said and said[1]!r})")
    return problems


def test_design_lists_the_layers_the_contract_enforces():
    design = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert len(design_layers(design, frozenset())) >= 10  # the list was found and parsed
    assert disagreements(design, pyproject) == []


def test_a_layer_out_of_order_in_design_is_reported():
    design = (ROOT / "DESIGN.md").read_text(encoding="utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    swapped = design.replace("**memory**", "**@@**").replace("**workspaces**", "**memory**").replace("**@@**",
                                                                                                  "**workspaces**")
    assert swapped != design
    problems = disagreements(swapped, pyproject)
    assert len(problems) == 2 and all("memory" in p and "workspaces" in p for p in problems)
    siblings = design.replace("**retrieval | tagging**", "**retrieval : tagging**")
    assert [p for p in disagreements(siblings, pyproject) if "retrieval" in p]
