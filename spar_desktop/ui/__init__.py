"""PySide6 layer: a thin UI over spar_desktop.core (the only package allowed to import Qt).

Grouped by feature (as napari's ``_qt/``); each group holds its widgets, its controller and its
``ops`` (one-line background calls of the core, no Qt):

- ``base/``: the shell every group uses: the task runner (tasks) and task list, progress reading,
  child-process ops, interpreter tuning (runtime), platform check, qasync glue, style, status bar,
  window state, settings and about dialogs, drawn icons, elided label, flow layout, child-document
  names, Show in folder. It imports no feature group (an import-linter contract).
- ``library/``: the metadata index: tag tree and panel, file table and panel, details, issues,
  drop-to-index, folder watcher, first run, tag review, topic proposal.
- ``workspaces/``: workspace panel, dialog and its widgets, search results, "Cover my session";
  ``features.WorkspaceFeatures`` wires workspaces into the window.
- ``chat/``: the chat pane and message view; ``features.ChatFeatures`` wires chat into the window.
- ``relations/``: the graph view and items, live updates; ``features.RelationsFeatures`` wires the
  Relations tab into the window.
- ``viewer/``: the document viewer.
- ``tools/``: the ``--smoke`` run, imported only by app.py when the flag is given.

``app.py`` (the ``spar-desktop`` entry point) and ``main_window.py`` (with ``window_actions.py``, its
menus) sit on top of the groups. The groups never import each other (an import-linter contract):
the main window hands one what it needs of another (chat gets the workspace controller), and they
hear of each other's writes through the core's ``Changes``. The UI never imports the CLI.
"""

# First, before any widget exists: neutralise the binding's reference-count defect (qtcompat).
from spar_desktop.ui.base import qtcompat as _qtcompat  # noqa: F401
