"""Cover my session beside the workspace search box: without co-occurrence clusters the button says
what it needs and the first click builds them in the background, then searches; results that a
cluster added are marked "+ from cluster" (and explained in their tooltip); opening one works like
any result."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spar_desktop.core.relations import persist
from spar_desktop.core.relations.expanded_search import EXPANSION_LABEL, EXPANSION_NOTE, FROM_CLUSTER
from spar_desktop.ui.workspaces.search_results import CLUSTER_ROLE, HitDelegate, hit_html
from spar_desktop.ui.workspaces.session_search import NEEDS_CLUSTERS
from tests.ui.conftest import BUILD_TIMEOUT_MS, TOPICS, UI_TIMEOUT_MS, write_topic_share

MORE = {
    "Garden": "Plant the tomato seedlings {i} in the garden bed, water the roses and prune the apple tree.",
    "Music": "The orchestra {i} rehearsed the symphony: violins, cellos and a piano concerto in the concert hall.",
}
QUERY = "rocket launch to the space station"


@pytest.fixture
def workspace_window(qtbot, make_window, tmp_path: Path):
    root = write_topic_share(tmp_path / "share", {**TOPICS, **MORE})
    w = make_window()
    w.controller.index_paths([str(root)])
    qtbot.waitUntil(lambda: w.file_panel.model.total == 20 and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    manager = w.workspaces.service.manager
    manager.create("mix", tags=["|".join([*TOPICS, *MORE])])
    assert manager.build("mix").ready == 20  # in the test thread: the window only needs the result
    w.workspaces.refresh()
    qtbot.waitUntil(lambda: w.workspaces.row("mix") is not None, timeout=UI_TIMEOUT_MS)
    w.workspaces.select("mix")
    qtbot.waitUntil(lambda: w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    return w


def shown_results(panel) -> list[tuple[str, bool]]:
    return [(Path(panel.hit(i).path).parent.name, bool(panel.results.item(i).data(CLUSTER_ROLE)))
            for i in range(panel.results.count())]


def test_cover_my_session_builds_clusters_then_marks_what_they_add(qtbot, workspace_window):
    w = workspace_window
    panel = w.workspace_panel
    w.views.show_workspace()  # the search sits in the workspace view (Ctrl+2)
    button = panel.session.button
    assert button.text() == EXPANSION_LABEL and button.isEnabled() and button.isVisible()
    assert button.toolTip() == EXPANSION_NOTE + "\n\n" + NEEDS_CLUSTERS  # no clusters yet: says what it needs

    panel.search_box.setText(QUERY)
    started = []
    w.runner.task_started.connect(lambda h: started.append(h.title))
    button.click()  # builds the clusters in the background, then searches
    assert panel.results_label.text().startswith(f"{EXPANSION_LABEL} needs the co-occurrence clusters of mix")
    qtbot.waitUntil(lambda: panel.results_label.text().startswith(f"{EXPANSION_LABEL}:") and w.runner.is_idle(),
                    timeout=BUILD_TIMEOUT_MS)
    assert started[:2] == ["Building co-occurrence clusters of mix", f"{EXPANSION_LABEL} in mix"]
    assert button.toolTip() == EXPANSION_NOTE  # built: nothing more is needed
    results = shown_results(panel)
    assert len(results) == 8 and [r for r in results[:3]] == [("Space", False)] * 3  # the search's own top first

    # Clusters as files used together make them: the search's lowest-ranked file shares the space
    # files' cluster (as if always opened with them), so expansion brings it in, marked.
    manager = w.workspaces.service.manager
    ranked = list(dict.fromkeys(h.file_id for h in manager.search("mix", QUERY, k=50).hits))
    outsider = ranked[-1]
    d = persist.relations_dir(w.settings.data_dir, f"workspace-{w.workspaces.row('mix').id}", "cooc")
    cooc = persist.load(d)
    space = {str(h.file_id) for h in manager.search("mix", QUERY, k=50).hits if "/Space/" in h.path}
    labels = np.array([0 if d in space or d == str(outsider) else i + 1 for i, d in enumerate(cooc.ids)])
    cooc.cluster_labels = np.unique(labels, return_inverse=True)[1]
    persist.save(d, cooc)

    button.click()
    qtbot.waitUntil(lambda: panel.results_label.text().startswith(f"{EXPANSION_LABEL}:") and w.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    results = shown_results(panel)
    marked = [i for i, (_, m) in enumerate(results) if m]
    assert len(results) == 8 and results[:3] == [("Space", False)] * 3
    assert [panel.hit(i).file_id for i in marked] == [outsider]
    assert "1 added from clusters" in panel.results_label.text()
    item = panel.results.item(marked[0])
    assert item.toolTip().startswith(f"{FROM_CLUSTER}: {EXPANSION_LABEL} added this file")
    hit = panel.hit(marked[0])
    assert FROM_CLUSTER in hit_html(hit, "", from_cluster=True) and FROM_CLUSTER not in hit_html(hit, "")
    assert isinstance(panel.results.itemDelegate(), HitDelegate)

    # opening a marked result opens the file (its opening, or its best passage) in the viewer
    panel.results.setCurrentItem(item)
    with qtbot.waitSignal(panel.hit_activated, timeout=3000):
        panel.results.itemActivated.emit(item)
    assert w.viewer.path == hit.path
    qtbot.waitUntil(w.runner.is_idle, timeout=UI_TIMEOUT_MS)
