"""A QTreeView for models that load a node's children when it is expanded (canFetchMore/fetchMore).

QTreeView marks a node expanded and then, while laying it out, asks the model to fetch its
children; the rows inserted under a node already marked expanded make QTreeView schedule a layout
of *every* visible row again (the model's index, hasChildren and flags for each, in Python for our
models), although the layout in progress counts the new rows itself. In the tag tree at 1M files,
with six departments of 416 projects open, each later expand cost 75-105 ms of the UI thread
however few children it had (benchmarks/app_at_scale.py --probe: all of it the UI thread's own
CPU). Rows inserted while the view is expanding are laid out by that expand: this view skips the
second, whole layout for them.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex
from PySide6.QtWidgets import QAbstractItemView, QTreeView

Index = QModelIndex | QPersistentModelIndex


class LazyTreeView(QTreeView):
    def rowsInserted(self, parent: Index, start: int, end: int) -> None:  # noqa: N802 - Qt's name
        if self.state() == QAbstractItemView.State.ExpandingState:
            # Fetched by the layout of the node being expanded, which lays them out next: only the
            # item view's own bookkeeping, not QTreeView's full relayout.
            QAbstractItemView.rowsInserted(self, parent, start, end)
            return
        super().rowsInserted(parent, start, end)
