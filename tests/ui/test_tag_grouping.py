"""Grouping tags from the tag tree (offscreen): the context menu opens the dialog, the model's
groups are edited and accepted, and the window's tree shows the new level."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QMenu
from sqlalchemy import select

from spar_desktop.core.library.models import File, FileTag, Tag
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import tag_files
from spar_desktop.core.library.taxonomy import import_taxonomy
from tests.support.fake_ollama import FakeOllama
from tests.ui.conftest import UI_TIMEOUT_MS

TERMS = ["Pumps", "Valves", "Seals", "Invoices", "Receipts", "Payments"]
REPLY = json.dumps({"groups": [{"name": "Mechanical", "tags": ["Pumps", "Valves", "Seals"]},
                               {"name": "Finance", "tags": ["Invoices", "Receipts", "Payments"]}]})


def flat_taxonomy(library, tmp_path: Path) -> dict[str, int]:
    share = tmp_path / "share"
    share.mkdir()
    (share / "pump.txt").write_text("The feed pump was overhauled.", encoding="utf-8")
    Scanner(library).scan([str(share)])
    tax = tmp_path / "tax.json"
    tax.write_text(json.dumps({"Equipment": {t: {} for t in TERMS}}), encoding="utf-8")
    with library.session() as s:
        import_taxonomy(s, tax)
        ids = {t.value: t.id for t in s.scalars(select(Tag).where(Tag.source == "taxonomy"))}
        tag_files(s, list(s.scalars(select(File.id))), ids["Pumps"], "taxonomy")
    return ids


def menu_action(panel, index, text: str):
    menu = QMenu(panel)
    panel._add_grouping_actions(menu, index)
    return next((a for a in menu.actions() if a.text().startswith(text)), None)


def test_group_children_edit_and_accept(qtbot, tmp_path, settings, library, make_window):
    ids = flat_taxonomy(library, tmp_path)
    with library.session() as s:
        before = set(s.execute(select(FileTag.file_id, FileTag.tag_id)).all())
    window = make_window()
    panel = window.tag_panel
    qtbot.waitUntil(lambda: ids["Equipment"] in panel.model.infos, timeout=UI_TIMEOUT_MS)
    assert panel.select_tag(ids["Equipment"])
    equipment = panel.view.selectionModel().selectedRows(0)[0]
    fake = FakeOllama().start()
    try:
        fake.set(reply=REPLY)
        window.settings = replace(window.settings, ollama_host=fake.url)
        menu_action(panel, equipment, "Group its children").trigger()
        dialog = window._tag_grouping
        qtbot.waitUntil(lambda: dialog.proposal is not None, timeout=UI_TIMEOUT_MS)
    finally:
        fake.stop()
    assert dialog.proposal.method == "ollama" and "under “Equipment”" in dialog.summary.text()
    assert [i.text(0) for i in dialog.group_items()] == ["Mechanical", "Finance"]
    assert panel.model.infos[ids["Equipment"]].child_ids == tuple(sorted(ids[t] for t in TERMS))  # not yet

    dialog.item_for("2").setText(0, "  Money ")  # an edit in the tree
    assert dialog.proposal.group("2").name == "Money" and dialog.item_for("2").text(0) == "Money"
    dialog.move_tag(ids["Seals"], None)  # right-click ▸ Move to ▸ Not grouped
    mech = dialog.item_for("1")
    assert [mech.child(k).text(0) for k in range(mech.childCount())] == ["Pumps", "Valves"]
    dialog.item_for("2").setCheckState(0, Qt.CheckState.Unchecked)
    dialog.item_for("2").setCheckState(0, Qt.CheckState.Checked)
    dialog.accept_button.click()
    qtbot.waitUntil(lambda: "tags moved" in dialog.status.text(), timeout=UI_TIMEOUT_MS)

    def labels(tag_id: int) -> set[str]:
        infos = panel.model.infos
        return {infos[c].value for c in infos[tag_id].child_ids}

    qtbot.waitUntil(lambda: labels(ids["Equipment"]) == {"Mechanical", "Money", "Seals"}, timeout=UI_TIMEOUT_MS)
    infos = panel.model.infos
    mechanical = next(c for c in infos[ids["Equipment"]].child_ids if infos[c].value == "Mechanical")
    assert labels(mechanical) == {"Pumps", "Valves"} and infos[mechanical].file_count == 1
    # The tree shows Equipment ▸ Mechanical ▸ Pumps.
    pumps = panel.model.first_index_of_tag(ids["Pumps"])
    assert pumps.isValid() and pumps.parent().data() == "Mechanical" and pumps.parent().parent().data() == "Equipment"
    with library.session() as s:
        assert set(s.execute(select(FileTag.file_id, FileTag.tag_id)).all()) == before  # files keep their tags


def test_group_these_selected_siblings_without_a_model(qtbot, tmp_path, settings, library, make_window):
    ids = flat_taxonomy(library, tmp_path)
    window = make_window()
    panel = window.tag_panel
    qtbot.waitUntil(lambda: ids["Equipment"] in panel.model.infos, timeout=UI_TIMEOUT_MS)
    sel = panel.view.selectionModel()
    for term in ("Invoices", "Payments", "Receipts"):
        index = panel.view_index(panel.model.first_index_of_tag(ids[term]))
        sel.select(index, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    assert menu_action(panel, index, "Group its children") is None  # a leaf has none
    action = menu_action(panel, index, "Group these 3 tags")
    window.settings = replace(window.settings, ollama_host="http://127.0.0.1:9")
    action.trigger()
    dialog = window._tag_grouping
    assert set(dialog.tag_ids) == {ids["Invoices"], ids["Payments"], ids["Receipts"]}
    qtbot.waitUntil(lambda: dialog.proposal is not None, timeout=UI_TIMEOUT_MS)
    assert dialog.proposal.method == "clusters" and "no Ollama server" in dialog.status.text()
    assert dialog.proposal.selection.parent_id == ids["Equipment"]
