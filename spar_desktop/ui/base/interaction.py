"""The user working the window, as background work sees it (``core.progress.UserActivity``).

Only signals that mean the user is looking at something move it: a scroll bar's value (wheel,
keys, drags and clicks all move the bars) and a tree row expanded or collapsed. An event filter on
the whole application would have seen every event (paints, timers) in Python on the UI thread.
"""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractScrollArea, QTreeView

from spar_desktop.core.progress import UserActivity


def watch_interaction(activity: UserActivity, *views: QAbstractScrollArea) -> None:
    """Touch ``activity`` whenever the user scrolls one of ``views`` or opens or closes one of
    their tree rows."""
    touch = activity.touch
    for view in views:
        for bar in (view.verticalScrollBar(), view.horizontalScrollBar()):
            bar.valueChanged.connect(lambda _value: touch())
        if isinstance(view, QTreeView):
            view.expanded.connect(lambda _index: touch())
            view.collapsed.connect(lambda _index: touch())
