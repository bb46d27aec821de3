"""A live relation graph: files added, edited and deleted in a watched folder are rescanned; the
Relations tab says the graph is out of date, updates it in the background (EDR-MQ incrementally,
real encoder) and shows the new graph; a graph never opened is updated when it is first shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from spar_desktop.core.relations import persist
from tests.ui.conftest import BUILD_TIMEOUT_MS, TOPICS, UI_TIMEOUT_MS, wait_graph, write_topic_share
from tests.ui.test_relations_tab import accept_offer


def change_files(root: Path) -> tuple[Path, Path, Path]:
    """A new space file, a car file rewritten about baking, a cooking file deleted."""
    new = root / "Space" / "space5.txt"
    new.write_text(TOPICS["Space"].format(i=5) + " The capsule docked with the orbital station.", encoding="utf-8")
    edited = root / "Cars" / "cars1.txt"
    edited.write_text("Bake the bread: knead the dough with flour, yeast and butter, and bake it in the oven until "
                      "the crust is golden.", encoding="utf-8")
    gone = root / "Cooking" / "cooking4.txt"
    gone.unlink()
    return new, edited, gone


@pytest.fixture
def watched_window(qtbot, make_window, tmp_path: Path):
    root = write_topic_share(tmp_path / "share")
    window = make_window(watch=True, debounce_ms=300)
    window.controller.index_paths([str(root)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 12 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.controller.watcher.active_roots == [str(root.resolve())], timeout=UI_TIMEOUT_MS)
    return window, root


def test_changed_files_mark_the_graph_out_of_date_and_update_it(qtbot, watched_window):
    w, root = watched_window
    view = w.relations.view
    view.set_method("edrmq")
    w.relations.show()
    accept_offer(qtbot, w)  # the whole index: built once asked for
    wait_graph(qtbot, w, "edrmq", BUILD_TIMEOUT_MS)
    before = view.payload
    assert before.n_nodes == 12 and not w.relations.live.badge.isVisible()
    badges: list[str] = []
    w.relations.live.badge_changed.connect(badges.append)
    scans = []
    w.controller.scan_finished.connect(scans.append)

    new, edited, gone = change_files(root)  # the watcher rescans; the graph follows
    qtbot.waitUntil(lambda: bool(scans) and "" in badges and w.runner.is_idle(), timeout=BUILD_TIMEOUT_MS)
    assert scans[0].new == 1 and scans[0].changed == 1 and scans[0].missing == 1
    assert badges[0] == "Out of date — 3 files changed"
    assert badges[1].startswith("Updating relations… 3 files changed")
    assert badges[-1] == "" and not w.relations.live.badge.isVisible()  # gone once the new graph is shown
    after = view.payload
    assert after is not before and after.method == "edrmq" and after.n_nodes == 12
    assert str(new) in after.paths and str(gone) not in after.paths and str(edited) in after.paths
    # the update was incremental: only the new and the edited file were queried
    stored = persist.load(persist.relations_dir(w.settings.data_dir, "index", "edrmq"))
    assert stored.stats["last_update"] == {"added": 1, "changed": 1, "removed": 1, "fresh_documents": 2}
    # the edited file, now about baking, is linked to cooking files
    row = after.paths.index(str(edited))
    linked = {after.paths[b if a == row else a] for a, b in after.edges.tolist() if row in (a, b)}
    assert any("/Cooking/" in p for p in linked)


def test_a_graph_never_shown_is_brought_up_to_date_when_opened(qtbot, make_window, tmp_path: Path):
    from spar_desktop.core.relations.service import build_relations

    root = write_topic_share(tmp_path / "share")
    w = make_window()
    w.controller.index_paths([str(root)])
    qtbot.waitUntil(lambda: w.file_panel.model.total == 12 and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    build_relations(w.library, method="tfidf")  # built earlier (e.g. by `spar relations build`)
    new, _, gone = change_files(root)
    started = []
    w.runner.task_started.connect(lambda h: started.append(h.key))
    w.controller.rescan_all()
    qtbot.waitUntil(lambda: w.file_panel.model.total == 12 and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert "relations-graph" not in started and not w.relations.live.badge.isVisible()  # nothing computed unseen
    w.relations.view.set_method("tfidf")
    w.relations.show()
    wait_graph(qtbot, w, "tfidf")
    paths = w.relations.view.payload.paths
    assert str(new) in paths and str(gone) not in paths and len(paths) == 12


def test_rebuild_recomputes_exactly_after_updates(qtbot, watched_window):
    w, root = watched_window
    view = w.relations.view
    view.set_method("edrmq")
    w.relations.show()
    accept_offer(qtbot, w)
    wait_graph(qtbot, w, "edrmq", BUILD_TIMEOUT_MS)
    where = persist.relations_dir(w.settings.data_dir, "index", "edrmq")
    change_files(root)
    qtbot.waitUntil(lambda: "last_update" in persist.load(where).stats and w.runner.is_idle(), timeout=BUILD_TIMEOUT_MS)
    view.rebuild_button.click()
    accept_offer(qtbot, w, rebuild=True)
    qtbot.waitUntil(lambda: not w.runner.is_running("relations-graph"), timeout=BUILD_TIMEOUT_MS)
    stored = persist.load(where)
    assert "last_update" not in stored.stats and len(stored.ids) == 12  # every query against every document
