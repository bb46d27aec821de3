"""Expanding a tag lays out that tag's rows only (issue 29, UI stalls at 1M files): with a large
node open, opening a small one asks the model for the small one's rows, not for every visible row
again, and the view shows every row in the tree's order."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex

from spar_desktop.core.library import overview
from spar_desktop.core.library.tag_edits import import_taxonomy_file
from spar_desktop.ui.library.tag_panel import TagPanel
from spar_desktop.ui.library.tag_tree import TagTreeModel

BIG = 300


@pytest.fixture
def taxonomy_library(library, tmp_path):
    csv = tmp_path / "tax.csv"
    rows = [",Big", ",Small", *(f"Big,item-{i:03d}" for i in range(BIG)), "Small,leaf-a", "Small,leaf-b",
            "leaf-b,deep"]
    csv.write_text("parent,child\n" + "\n".join(rows) + "\n", encoding="utf-8")
    import_taxonomy_file(library, str(csv))
    return library


def _child(model, parent, label):
    return next(model.index(r, 0, parent) for r in range(model.rowCount(parent))
                if model.index(r, 0, parent).data() == label)


def _shown(view) -> list[str]:
    """The labels the view lays out, top to bottom (what a user sees when scrolling the panel)."""
    out, index = [], view.model().index(0, 0)
    while index.isValid():
        out.append(index.data())
        index = view.indexBelow(index)
    return out


def test_opening_a_tag_next_to_a_large_open_one_lays_out_its_rows_only(qtbot, taxonomy_library, monkeypatch):
    asked: list[int] = []
    original = TagTreeModel.index

    def counting(self, row, column, parent=QModelIndex()):
        asked.append(row)
        return original(self, row, column, parent)

    monkeypatch.setattr(TagTreeModel, "index", counting)
    panel = TagPanel()
    qtbot.addWidget(panel)
    panel.resize(400, 600)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_snapshot(overview.load_tags(taxonomy_library))
    view, model = panel.view, panel.model

    def expand(index) -> None:  # as a click on its arrow: Qt's expand, which fetches the rows
        view.expand(index)
        qtbot.waitUntil(lambda: not model.canFetchMore(index), timeout=5_000)
        qtbot.wait(50)  # the event loop runs: a layout of every row would come now

    taxonomy = _child(model, QModelIndex(), "Taxonomy")
    expand(taxonomy)
    big = _child(model, taxonomy, "Big")
    expand(big)
    small = _child(model, taxonomy, "Small")
    asked.clear()
    expand(small)
    assert model.rowCount(small) == 2
    # Its 2 rows and the rows painted (~90 here); a layout of every visible row asked ~400.
    assert len(asked) < BIG, f"the model was asked for {len(asked)} rows to open a tag of 2"
    shown = _shown(view)
    start = shown.index("Taxonomy")
    assert shown[start:] == ["Taxonomy", "Big", *(f"item-{i:03d}" for i in range(BIG)), "Small", "leaf-a", "leaf-b"]
    leaf_b = _child(model, small, "leaf-b")
    expand(leaf_b)
    assert _shown(view)[-2:] == ["leaf-b", "deep"]
    assert view.visualRect(_child(model, leaf_b, "deep")).height() > 0  # laid out where it belongs
    view.collapse(big)
    qtbot.wait(50)
    assert _shown(view)[start:] == ["Taxonomy", "Big", "Small", "leaf-a", "leaf-b", "deep"]
