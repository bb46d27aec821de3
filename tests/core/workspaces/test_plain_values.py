"""A saved filter read back: the fast way of making its tag choices gives the values
``__init__`` gives (equal, hashable, still frozen), and old or damaged rows still go through
``__init__`` (defaults filled, unknown fields refused)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from spar_desktop.core.workspaces.plain_values import instances, plain
from spar_desktop.core.workspaces.selection import TagChoice, TagGroup, WorkspaceFilter


def test_choices_read_back_equal_what_was_saved_and_stay_frozen():
    saved = tuple(TagChoice(i, "folder", f"Engineering/{i}/minutes", 0.7, "lexical") for i in range(50))
    flt = WorkspaceFilter(groups=(TagGroup("minutes", saved[:30], saved[30:]),), ranked=True, budget=25)
    again = WorkspaceFilter.from_json(json.loads(json.dumps(flt.to_json())))
    assert again == flt and hash(again.groups[0].tags[3]) == hash(saved[3])
    assert plain(again) == plain(flt)
    with pytest.raises(dataclasses.FrozenInstanceError):
        again.groups[0].tags[0].score = 1.0  # type: ignore[misc]


def test_rows_without_every_field_get_the_defaults_and_unknown_fields_are_refused():
    old = instances(TagChoice, [{"tag_id": 3, "key": "topic", "value": "Safety"}])
    assert old == (TagChoice(3, "topic", "Safety"),) and old[0].how == "user" and old[0].score == 1.0
    with pytest.raises(TypeError):
        instances(TagChoice, [{"tag_id": 3, "key": "topic", "value": "Safety", "colour": "red"}])
