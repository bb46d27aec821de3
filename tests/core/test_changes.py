"""Changes: what an operation wrote, merged with | and announced once (core/changes.py)."""

from __future__ import annotations

import pytest

from spar_desktop.core.changes import NOTHING, Changes, changes_of


def test_merge_keeps_every_part_that_changed():
    merged = Changes(files=True) | Changes(tags=True) | NOTHING
    assert merged == Changes(files=True, tags=True)
    assert merged.names() == ("files", "tags")
    assert (Changes(workspaces=True) | Changes(workspaces=True)) == Changes(workspaces=True)
    assert Changes(files=True, relations=True) | Changes(tags=True, workspaces=True) == \
        Changes(True, True, True, True)


def test_nothing_is_false_and_values_are_frozen():
    assert not NOTHING and not Changes() and Changes(relations=True)
    with pytest.raises(Exception):
        Changes().files = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        Changes() | {"files": True}  # type: ignore[operator]


def test_changes_of_reads_a_reports_attribute():
    class Report:
        changes = Changes(workspaces=True)

    assert changes_of(Report()) == Changes(workspaces=True)
    assert changes_of("a plain value") is NOTHING and changes_of(None) is NOTHING
