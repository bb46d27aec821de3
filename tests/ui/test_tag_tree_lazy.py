"""The tag tree over tags read from SQL as it is browsed (issue 29: the app at a million files):
the same nodes, labels and counts as the tree over the snapshot that built every tag at once;
expanding a node reads that node's children only; the filter proxy is in the view only while the
filter box has text, and the selection survives it."""

from __future__ import annotations

from types import MappingProxyType

import pytest
from PySide6.QtCore import QModelIndex, Qt

from spar_desktop.core.library import overview
from spar_desktop.core.library.roots import folder_roots
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tag_edits import import_taxonomy_file
from spar_desktop.core.library.tags import tag_infos
from spar_desktop.ui.library.ops import TagSnapshot
from spar_desktop.ui.library.tag_panel import TagPanel


@pytest.fixture
def indexed(library, small_tree, tmp_path):
    taxonomy = tmp_path / "tax.csv"
    taxonomy.write_text("parent,child\n,Money\n,People\nMoney,Payroll\nPeople,Payroll\n", encoding="utf-8")
    Scanner(library).scan([str(small_tree)])
    import_taxonomy_file(library, str(taxonomy))
    return library


def panel_on(qtbot, snapshot) -> TagPanel:
    panel = TagPanel()
    qtbot.addWidget(panel)
    panel.resize(400, 600)
    panel.show()  # a shown view fetches what it expands, as in the window
    qtbot.waitExposed(panel)
    panel.set_snapshot(snapshot)
    return panel


def whole_tree(model, parent=QModelIndex(), depth=0) -> list[tuple]:
    """Every node (fetching as it goes): depth, label, count, tooltip."""
    if model.canFetchMore(parent):
        model.fetchMore(parent)
    out = []
    for r in range(model.rowCount(parent)):
        index = model.index(r, 0, parent)
        out.append((depth, index.data(), model.index(r, 1, parent).data(), index.data(Qt.ItemDataRole.ToolTipRole)))
        out += whole_tree(model, index, depth + 1)
    return out


def test_lazy_tree_shows_the_same_nodes_and_counts_as_the_whole_snapshot(qtbot, indexed):
    with indexed.session() as s:
        whole = TagSnapshot(MappingProxyType(tag_infos(s)), folder_roots(s))
    before = whole_tree(panel_on(qtbot, whole).model)
    lazy = panel_on(qtbot, overview.load_tags(indexed))
    after = whole_tree(lazy.model)
    assert after == before
    assert {"Finance", "Reports", "2021", "Money", "People"} <= {row[1] for row in after}
    assert sum(1 for row in after if row[1] == "Payroll") == 2  # under both parents


def test_expanding_a_node_reads_only_its_children(qtbot, indexed):
    panel = panel_on(qtbot, overview.load_tags(indexed))
    model, infos = panel.model, panel.model.infos
    roots = set(infos.root_ids())
    assert infos.loaded() == roots  # start-up read the top level only
    assert panel.view.model() is model  # no filter: no proxy between the tree and its view
    view = panel.view

    def child(parent, label):
        return next(model.index(r, 0, parent) for r in range(model.rowCount(parent))
                    if model.index(r, 0, parent).data() == label)

    def expand(index):  # as a user clicks the arrow: the view fetches the node's rows when it lays them out
        view.expand(index)
        qtbot.waitUntil(lambda: not model.canFetchMore(index), timeout=5_000)

    folders = child(QModelIndex(), "Folders")
    expand(folders)
    share = child(folders, "share")  # the indexed root's node
    expand(share)
    finance = child(share, "Finance")
    assert infos.loaded() == roots  # Finance and HR are roots: nothing new to read
    expand(finance)
    assert [model.index(r, 0, finance).data() for r in range(model.rowCount(finance))] == ["Reports"]
    reports = model.tag_id(child(finance, "Reports"))
    assert infos.loaded() == roots | {reports}  # Finance's child, nothing else (the months unread)
    dates = child(QModelIndex(), "Dates")
    expand(dates)
    year = child(dates, "2021")
    expand(year)
    kids = set(infos[model.tag_id(year)].child_ids)
    assert kids and infos.loaded() == roots | {reports} | kids

def test_filter_proxy_only_while_filtering_and_selection_survives(qtbot, indexed):
    panel = panel_on(qtbot, overview.load_tags(indexed))
    infos = panel.model.infos
    hr = next(i for i in infos.root_ids() if infos[i].key == "HR")
    emitted = []
    panel.filter_changed.connect(lambda groups, text: emitted.append(groups))
    assert panel.select_tag(hr) and panel.selected_tag_ids() == [hr]
    panel.search.setText("h")  # HR and "share" match; the selected HR stays shown
    qtbot.waitUntil(lambda: panel.view.model() is panel.proxy, timeout=5_000)
    assert panel.selected_tag_ids() == [hr]
    panel.search.setText("payroll")  # hides HR: its selection goes, as the proxy always did
    qtbot.waitUntil(lambda: panel.proxy.filter_text == "payroll", timeout=5_000)
    assert panel.selected_tag_ids() == [] and emitted[-1] == ()
    assert panel.select_tag(next(i for i in infos.search("payroll")[0]))
    panel.search.clear()
    qtbot.waitUntil(lambda: panel.view.model() is panel.model, timeout=5_000)
    assert [infos[i].value for i in panel.selected_tag_ids()] == ["Payroll"]  # kept out of the filter
    assert panel.view.model().rowCount() == 3  # Folders, Dates, Taxonomy
