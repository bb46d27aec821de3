"""Views reload through the task runner's one notification (``TaskRunner.changed``): whatever
operation wrote files, tags or workspaces, the controllers that show them reload; nothing reloads
by hand after an operation."""

from __future__ import annotations

from spar_desktop.core.changes import Changes
from spar_desktop.core.library.tag_edits import TagEdit
from tests.ui.conftest import UI_TIMEOUT_MS


def test_an_operations_changes_reload_the_library_view(qtbot, window, small_tree):
    c = window.controller
    c.index_paths([str(small_tree)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)

    # Any op whose result reports tag changes (here one from elsewhere: a dialog's) reloads the tree.
    tags, files, details = [], [], []
    c.tags_loaded.connect(tags.append)
    c.files_loaded.connect(lambda rows, _d: files.append(rows))
    c.tags_changed.connect(lambda: details.append(True))
    window.runner.run(lambda p, cancel: TagEdit("tagged elsewhere", 1), title="An edit")
    qtbot.waitUntil(lambda: bool(tags and details) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert not files  # no tag filter: the table shows the same rows

    # Files changed: summary, tree, table and issues reload (one task); workspaces stay as they are.
    loaded = []
    window.workspaces.workspaces_loaded.connect(loaded.append)
    with qtbot.waitSignal(c.summary_loaded, timeout=UI_TIMEOUT_MS):
        window.runner.run(lambda p, cancel: None, title="A scan elsewhere", changes=Changes(files=True))
    qtbot.waitUntil(lambda: bool(files) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert not loaded


def test_tagging_files_reloads_the_tree_and_the_filtered_table_through_the_notification(qtbot, window, small_tree):
    c = window.controller
    c.index_paths([str(small_tree)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    ids = tuple(window.file_panel.model.record(r).id for r in range(2))
    announced = []
    window.runner.changed.connect(announced.append)
    c.tag_files(ids, None, "Audit")
    qtbot.waitUntil(lambda: any(t.value == "Audit" for t in window.tag_panel.model.infos.values())
                    and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert announced == [Changes(tags=True)] and window.statusBar().currentMessage() == "Tagged 2 files"
    audit = next(i for i, t in window.tag_panel.model.infos.items() if t.value == "Audit")
    c.set_tag_filter((frozenset({audit}),), "Audit")
    qtbot.waitUntil(lambda: window.file_panel.model.total == 2 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    c.untag_files(ids[:1], audit)  # the filtered table follows the tags without a reload call
    qtbot.waitUntil(lambda: window.file_panel.model.total == 1 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)


def test_workspace_changes_reload_the_workspace_list(qtbot, window):
    qtbot.waitUntil(lambda: window.workspaces.service is not None and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    with qtbot.waitSignal(window.workspaces.workspaces_loaded, timeout=UI_TIMEOUT_MS):
        window.runner.run(lambda p, cancel: None, title="An import elsewhere", changes=Changes(workspaces=True))
