"""Tag tree: selection filters the table (OR within a group, AND across groups); filter box."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt

from tests.ui.conftest import UI_TIMEOUT_MS


def tag_id(window, key: str) -> int:
    return next(i for i, t in window.tag_panel.model.infos.items() if t.key == key)


def indexed(qtbot, window, root, n):
    window.controller.index_paths([str(root)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == n and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)


def select(window, *keys: str) -> None:
    panel = window.tag_panel
    panel.clear_selection()
    for key in keys:
        index = panel.view_index(panel.model.first_index_of_tag(tag_id(window, key)))
        parent = index.parent()
        while parent.isValid():
            panel.view.expand(parent)
            parent = parent.parent()
        panel.view.selectionModel().select(index, QItemSelectionModel.SelectionFlag.Select
                                           | QItemSelectionModel.SelectionFlag.Rows)


def table_names(window) -> set[str]:
    m = window.file_panel.model
    return {m.record(r).name for r in range(m.rowCount())}


def wait_total(qtbot, window, n):
    qtbot.waitUntil(lambda: window.file_panel.model.total == n and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)


def test_selecting_tags_filters_the_table(qtbot, window, small_tree):
    indexed(qtbot, window, small_tree, 5)
    assert window.tag_panel.select_tag(tag_id(window, "Finance"))
    wait_total(qtbot, window, 3)  # a folder tag includes its sub-folders (Finance/Reports)
    assert table_names(window) == {"budget-2020.txt", "forecast.md", "q1-2021.txt"}
    assert "Folders: Finance" in window.file_panel.filter_label.text()
    assert window.file_panel.clear_button.isVisible()

    select(window, "Finance", "HR")  # same group: either
    wait_total(qtbot, window, 5)
    select(window, "Finance", "HR", "date:2021")  # plus another group: both
    wait_total(qtbot, window, 2)
    assert table_names(window) == {"q1-2021.txt", "handbook.txt"}

    window.file_panel.clear_button.click()
    wait_total(qtbot, window, 5)
    assert not window.file_panel.clear_button.isVisible()


def test_filter_box_finds_tags_without_expanding_everything(qtbot, window, small_tree):
    panel = window.tag_panel
    assert panel.empty_label.isVisibleTo(panel) and "once files are indexed" in panel.empty_label.text()
    indexed(qtbot, window, small_tree, 5)
    assert not panel.empty_label.isVisibleTo(panel)
    panel.search.setText("no-such-tag")
    qtbot.waitUntil(lambda: panel.empty_label.isVisibleTo(panel), timeout=5_000)
    assert "No tag matches “no-such-tag”" in panel.empty_label.text()
    panel.search.setText("repo")  # matches Finance/Reports only
    qtbot.waitUntil(lambda: panel.proxy.filter_text == "repo", timeout=5_000)
    proxy = panel.proxy
    groups = [proxy.data(proxy.index(r, 0)) for r in range(proxy.rowCount())]
    assert groups == ["Folders"]
    folders = proxy.index(0, 0)
    # One node per indexed root (named after the root folder), its folders under it.
    assert [proxy.data(proxy.index(r, 0, folders)) for r in range(proxy.rowCount(folders))] == [small_tree.name]
    root = proxy.index(0, 0, folders)
    assert [proxy.data(proxy.index(r, 0, root)) for r in range(proxy.rowCount(root))] == ["Finance"]
    finance = proxy.index(0, 0, root)
    assert panel.view.isExpanded(finance)  # the way to the match is opened
    assert proxy.data(proxy.index(0, 0, finance)) == "Reports"
    panel.search.clear()
    qtbot.waitUntil(lambda: proxy.rowCount() == 2, timeout=5_000)


def test_tree_keeps_selection_and_tags_files_from_the_context_actions(qtbot, window, small_tree, library):
    indexed(qtbot, window, small_tree, 5)
    window.tag_panel.select_tag(tag_id(window, "HR"))
    wait_total(qtbot, window, 2)
    window.file_panel.table.selectAll()
    window.controller.tag_files(tuple(r.id for r in window.file_panel.selected_records()), None, "Important")
    qtbot.waitUntil(lambda: any(t.key == "user:Important" for t in window.tag_panel.model.infos.values())
                    and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert window.tag_panel.selected_tag_ids() == [tag_id(window, "HR")]  # survived the tree reload
    important = tag_id(window, "user:Important")
    assert window.tag_panel.model.infos[important].file_count == 2
    select(window, "user:Important")
    wait_total(qtbot, window, 2)
    window.file_panel.table.selectAll()
    window.tag_panel.untag_files_requested.emit(important)
    qtbot.waitUntil(lambda: window.tag_panel.model.infos[important].file_count == 0 and window.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    wait_total(qtbot, window, 0)


def test_a_tag_under_two_parents_appears_under_both(qtbot, window, small_tree, library, tmp_path):
    taxonomy = tmp_path / "tax.csv"
    taxonomy.write_text("parent,child\n,Money\n,People\nMoney,Payroll\nPeople,Payroll\n", encoding="utf-8")
    indexed(qtbot, window, small_tree, 5)
    window.controller.import_taxonomy(str(taxonomy))
    qtbot.waitUntil(lambda: any(t.key == "tax:Payroll" for t in window.tag_panel.model.infos.values())
                    and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    model = window.tag_panel.model
    tax = next(model.index(r, 0) for r in range(model.rowCount()) if model.data(model.index(r, 0)) == "Taxonomy")
    model.fetchMore(tax)
    parents = {model.data(model.index(r, 0, tax)): model.index(r, 0, tax) for r in range(model.rowCount(tax))}
    assert set(parents) == {"Money", "People"}
    for index in parents.values():
        assert model.canFetchMore(index)  # lazily loaded
        model.fetchMore(index)
        assert [model.data(model.index(r, 0, index)) for r in range(model.rowCount(index))] == ["Payroll"]


def test_folders_show_one_node_per_indexed_root_named_after_it(qtbot, tmp_path):
    """Issue 14.9: the folders of every root sat side by side at one level of the tree."""
    from types import MappingProxyType, SimpleNamespace

    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.library.tags import tag_infos
    from spar_desktop.ui.library.tag_panel import TagPanel
    from spar_desktop.core.library.roots import folder_roots

    files = {"a/share/Finance/budget.md": "b", "a/share/Finance/q1.md": "q", "a/share/HR/handbook.md": "h",
             "b/share/Finance/forecast.md": "f", "b/share/Legal/contract.md": "c", "notes/Projects/plan.md": "p"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    lib = Library.open(load_settings(tmp_path / "data"))
    try:
        Scanner(lib).scan([str(tmp_path / "a" / "share"), str(tmp_path / "b" / "share"), str(tmp_path / "notes")])
        with lib.session() as s:
            snapshot = SimpleNamespace(infos=MappingProxyType(tag_infos(s)), folder_roots=folder_roots(s))
    finally:
        lib.close()
    panel = TagPanel()
    qtbot.addWidget(panel)
    panel.set_snapshot(snapshot)
    model = panel.model

    def rows(parent):
        if model.canFetchMore(parent):
            model.fetchMore(parent)
        return [(model.index(r, 0, parent), model.data(model.index(r, 0, parent)),
                 model.data(model.index(r, 1, parent))) for r in range(model.rowCount(parent))]

    [folders] = [i for i, label, _ in rows(QModelIndex()) if label == "Folders"]
    roots = rows(folders)
    assert [(label, count) for _, label, count in roots] == [("notes", "1"), ("share (a)", "3"), ("share (b)", "2")]
    under = {label: [(lab, n) for _, lab, n in rows(index)] for index, label, _ in roots}
    # Each root shows its own folders, counted over its own files.
    assert under == {"notes": [("Projects", "1")], "share (a)": [("Finance", "2"), ("HR", "1")],
                     "share (b)": [("Finance", "1"), ("Legal", "1")]}
    finance_b = rows(roots[2][0])[0][0]
    assert model.data(finance_b, Qt.ItemDataRole.ToolTipRole).startswith("share (b)/Finance")
    assert model.root_of(finance_b).path == str(tmp_path / "b" / "share")
    # Finding a tag goes through its root; the filter box keeps the roots that lead to a match.
    legal = next(i for i, t in model.infos.items() if t.key == "Legal")
    assert model.data(model.parent(model.first_index_of_tag(legal))) == "share (b)"
    panel.proxy.set_filter_text("legal")
    proxy_folders = panel.proxy.mapFromSource(folders)
    assert [panel.proxy.index(r, 0, proxy_folders).data() for r in range(panel.proxy.rowCount(proxy_folders))] == ["share (b)"]
    # Selecting a root node adds no constraint; its folders filter as before.
    assert panel.select_tag(legal) and panel.selected_tag_ids() == [legal]
