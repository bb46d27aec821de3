"""The Relations tab never builds the whole index silently: with no workspace current the scope is
the whole index, and a graph not built yet shows the build's estimate and a "Build relations for
the whole index (about …)" button instead of starting; the build runs only after the click.
Rebuild on the whole index asks the same way and keeps the stored graph on screen meanwhile.
(TF-IDF: no encoder needed; the offer is what this file is about.)"""

from __future__ import annotations

from tests.ui.conftest import UI_TIMEOUT_MS, wait_graph


def stored(w) -> set[str]:
    d = w.settings.data_dir / "relations"
    return {p.name for p in d.iterdir() if (p / "meta.json").is_file()} if d.is_dir() else set()


def test_the_whole_index_is_built_only_after_the_offer_is_accepted(qtbot, indexed_window):
    w = indexed_window
    view = w.relations.view
    view.set_method("tfidf")
    started: list[str] = []
    w.runner.task_started.connect(lambda handle: started.append(handle.title))
    w.relations.show()
    qtbot.waitUntil(lambda: view.offering and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert view.scope.currentData() == "index"  # no workspace is current
    assert stored(w) == set() and view.payload is None and w.relations.loaded_for is None
    assert view.offer_button.text() == "Build relations for the whole index (under a minute)"
    assert view.offer_label.text().startswith("Whole index: 12 documents, every file's text read, ")
    assert "on this machine" in view.status.text()
    assert [t for t in started if "elation" in t] == ["Relation graph (TF-IDF, the whole index)"]  # the estimate only
    qtbot.wait(200)
    assert stored(w) == set()  # still nothing: it waits for the click

    view.offer_button.click()
    assert not view.offering and w.runner.is_running("relations-graph")
    wait_graph(qtbot, w, "tfidf")
    assert stored(w) == {"index-tfidf"} and view.payload.n_nodes == 12 and not view.offering

    # Rebuild asks too, with the stored graph still drawn; the click rebuilds
    meta = w.settings.data_dir / "relations" / "index-tfidf" / "meta.json"
    before, shown = meta.stat().st_mtime_ns, view.payload
    view.rebuild_button.click()
    qtbot.waitUntil(lambda: view.offering and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert view.offer_button.text().startswith("Rebuild relations for the whole index (")
    assert view.payload is shown and meta.stat().st_mtime_ns == before
    view.offer_button.click()
    qtbot.waitUntil(lambda: view.payload is not shown and not w.runner.is_running("relations-graph"),
                    timeout=UI_TIMEOUT_MS)
    assert meta.stat().st_mtime_ns > before and not view.offering


def test_an_offer_for_another_choice_only_reloads(qtbot, indexed_window):
    """The user switched method while the offer was on screen and clicks it after a stale offer:
    what is chosen now is loaded (and offered again), nothing is built for the old choice."""
    w = indexed_window
    view = w.relations.view
    view.set_method("tfidf")
    w.relations.show()
    qtbot.waitUntil(lambda: view.offering and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    view.set_method("cooc")  # without the signal: as if the combo changed behind the offer
    view.offer_button.click()
    qtbot.waitUntil(lambda: view.offering and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert stored(w) == set() and w.relations.offered == (None, "cooc", False)
