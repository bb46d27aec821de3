"""The Relations tab of the main window: the graph of a real indexed folder is built in the worker
pool when the tab is first shown; the threshold slider thins the drawn edges; a click on a node
selects its file in the file table and Open shows it in the viewer; switching the method
recomputes (TF-IDF → EDR-MQ with the real encoder); the workspace scope falls back to the index
when no workspace is current. The whole index is built only after its estimate was shown and the
offer's button clicked (test_relations_whole_index.py for the offer itself)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QPoint, QPointF, Qt

from tests.ui.conftest import BUILD_TIMEOUT_MS, UI_TIMEOUT_MS, wait_graph


def click_node(qtbot, view, row: int) -> None:
    x, y = view.payload.positions[row]
    pt = view.plot.mapFromScene(view.plot.getViewBox().mapViewToScene(QPointF(float(x), float(y))))
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(pt.x()), int(pt.y())))


def accept_offer(qtbot, w, rebuild: bool = False) -> None:
    """Wait for the whole-index offer (estimate + button) and click its button."""
    view = w.relations.view
    qtbot.waitUntil(lambda: view.offering and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert view.offer_button.text().startswith(f"{'Rebuild' if rebuild else 'Build'} relations for the whole index (")
    view.offer_button.click()


def test_relations_tab_builds_selects_files_and_switches_method(qtbot, indexed_window):
    w = indexed_window
    assert w.relations._view is None  # nothing is created or computed for a tab nobody has opened
    view = w.relations.view
    view.set_method("tfidf")
    w.relations.show_action.trigger()  # View ▸ Relations graph
    assert w.tabs.currentWidget() is w.relations.page and view.isVisible()
    accept_offer(qtbot, w)
    wait_graph(qtbot, w, "tfidf")
    p = view.payload
    assert p.n_nodes == 12 and p.n_edges > 0
    assert view.scope.currentData() == "index"  # no workspace is current: the whole index
    assert all(w.file_panel.model.row_of(fid) >= 0 for fid in p.file_ids)
    # TF-IDF links documents of one topic: every edge joins two files of the same folder
    folder = {fid: Path(path).parent.name for fid, path in zip(p.file_ids, p.paths)}
    assert all(folder[p.file_ids[a]] == folder[p.file_ids[b]] for a, b in p.edges.tolist())

    # threshold slider: fewer edges drawn above a higher minimum weight
    all_edges = view.drawn_edges
    assert all_edges == p.n_edges
    view.slider.setValue(60)
    assert 0 < view.drawn_edges < all_edges
    view.slider.setValue(0)
    assert view.drawn_edges == all_edges

    # a click on a node selects its file in the table; Open shows it in the viewer
    qtbot.wait(100)
    with qtbot.waitSignal(view.fileActivated, timeout=3000) as clicked:
        click_node(qtbot, view, 3)
    fid = clicked.args[0]
    assert fid == p.file_ids[view.selected]
    assert w.file_panel.current_record() is not None and w.file_panel.current_record().id == fid
    qtbot.waitUntil(lambda: w.details.record is not None and w.details.record.id == fid, timeout=UI_TIMEOUT_MS)
    assert view.open_button.isEnabled()
    view.open_button.click()
    assert w.tabs.currentWidget() is w.viewer and w.viewer.path == p.paths[view.selected]

    # switching the method recomputes in the background (EDR-MQ: real encoder, synthetic queries)
    w.relations.show()
    view.method.setCurrentIndex(view.method.findData("edrmq"))
    assert w.runner.is_running("relations-graph")
    accept_offer(qtbot, w)
    wait_graph(qtbot, w, "edrmq", BUILD_TIMEOUT_MS)
    q = view.payload
    assert q.n_nodes == 12 and q.n_edges > 0 and "EDR-MQ (words + meaning)" in view.status.text()
    # k2 = 5 forces links beyond a 4-document topic, but the strongest relations stay within one:
    # the 18 strongest edges (3 topics × 6 pairs) are mostly same-topic pairs
    strongest = q.edges[(-q.weights).argsort(kind="stable")[:18]].tolist()
    same = sum(folder[q.file_ids[a]] == folder[q.file_ids[b]] for a, b in strongest)
    assert same >= 14, same

    # back to TF-IDF: read from the stored build, no recomputation of the relations
    view.method.setCurrentIndex(view.method.findData("tfidf"))
    wait_graph(qtbot, w, "tfidf")
    assert view.payload.n_edges == p.n_edges


def test_rebuild_and_co_occurrence_clusters(qtbot, indexed_window):
    from spar_desktop.core.relations import persist

    w = indexed_window
    view = w.relations.view
    view.set_method("tfidf")
    w.relations.show()
    accept_offer(qtbot, w)
    wait_graph(qtbot, w, "tfidf")
    assert w.relations.loaded_for == (None, "tfidf")
    meta = persist.relations_dir(w.settings.data_dir, "index", "tfidf") / "meta.json"
    before = meta.stat().st_mtime_ns
    view.rebuild_button.click()
    accept_offer(qtbot, w, rebuild=True)
    assert w.runner.is_running("relations-graph")
    qtbot.waitUntil(lambda: not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert meta.stat().st_mtime_ns > before
    assert view.payload is not None and view.payload.n_nodes == 12 and "TF-IDF" in view.status.text()
    # co-occurrence: every edge joins two documents of one cluster; colour by cluster
    view.method.setCurrentIndex(view.method.findData("cooc"))
    accept_offer(qtbot, w)
    wait_graph(qtbot, w, "cooc", BUILD_TIMEOUT_MS)
    c = view.payload
    clusters = c.groups["cluster"]
    assert len(set(clusters.tolist())) == 3  # M = ceil(12 / 5)
    assert c.n_edges > 0 and all(clusters[a] == clusters[b] for a, b in c.edges.tolist())
    view.color_by.setCurrentIndex(view.color_by.findData("cluster"))
    assert [tuple(b.color().getRgb()[:3]) for b in view.nodes_item.data["brush"][:1]] == [tuple(c.colors["cluster"][0])]

    # Relations stored by another task (its report announces them) reload the graph on screen.
    from spar_desktop.core.relations.service import build_relations

    started: list[str] = []
    w.runner.task_started.connect(lambda handle: started.append(handle.title))
    w.runner.run(lambda p, cancel: build_relations(w.library, method="cooc", progress=p, cancel=cancel),
                 title="A build elsewhere")
    qtbot.waitUntil(lambda: any(t.startswith("Relation graph (Co-occurrence") for t in started)
                    and w.runner.is_idle(), timeout=BUILD_TIMEOUT_MS)
    assert view.payload is not None and view.payload.method == "cooc" and view.payload is not c


def test_workspace_scope_follows_the_current_workspace(qtbot, indexed_window):
    w = indexed_window
    view = w.relations.view
    manager = w.workspaces.service.manager
    manager.create("space", tags=["Space"])
    manager.build("space")  # in the test thread: the window only needs the result
    w.workspaces.refresh()
    qtbot.waitUntil(lambda: w.workspaces.row("space") is not None, timeout=UI_TIMEOUT_MS)
    w.workspaces.select("space")
    view.set_method("tfidf")
    view.set_scope("workspace")
    w.relations.show()
    qtbot.waitUntil(lambda: view.payload is not None and view.payload.scope == "space"
                    and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert view.payload.n_nodes == 4 and all("/Space/" in p for p in view.payload.paths)
    # the whole index is one switch away (and one click: it is built only when asked for)
    view.scope.setCurrentIndex(view.scope.findData("index"))
    accept_offer(qtbot, w)
    qtbot.waitUntil(lambda: view.payload is not None and view.payload.scope == "whole index"
                    and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert view.payload.n_nodes == 12
