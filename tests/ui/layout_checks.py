"""What "nothing cut" means on screen, as checks over a live widget tree (tests/ui/test_layout_fits.py).

* clipped_buttons: a visible button must lie inside its parent and must not be cut by an ancestor
  (a scrolled-away button inside a scroll area is fine vertically: it scrolls into view; cut
  sideways it is not, the panels never scroll sideways).
* cut_labels: a one-line label whose text does not fit must elide and carry the full text as
  tooltip (ElidedLabel with full_tip); a plain QLabel narrower than its text is cut.
* cut_numbers: a number in a tree or table cell (a tag's file count) must fit its column: an
  elided count ("100,…") cannot be read, whatever its tooltip says.

Run as a script (``python -m tests.ui.layout_checks WIDTHxHEIGHT ...``) it opens a window on an
empty data dir, resizes it to each logical size and prints the problems as JSON, so a test can
run it under another QT_SCALE_FACTOR in a process of its own.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Iterable

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractScrollArea,
    QLabel,
    QTableView,
    QTreeView,
    QWidget,
)

NUMBER = re.compile(r"^[\d,.\s%]+$")


def _name(w: QWidget) -> str:
    text = w.text() if hasattr(w, "text") else ""
    return f"{type(w).__name__}({w.objectName() or text!r})"


def _shown(w: QWidget, top: QWidget) -> bool:
    return w.isVisible() and w.width() > 0 and w.height() > 0 and w.window() is top and not w.visibleRegion().isEmpty()


def _cut_by_ancestors(w: QWidget, top: QWidget) -> tuple[bool, bool]:
    """(cut sideways, cut vertically outside any scroll area) by the widget's ancestors."""
    rect = QRect(w.mapTo(top, w.rect().topLeft()), w.size())
    visible = QRect(rect)
    scrolled = False
    p = w.parentWidget()
    while p is not None and p is not top:
        if isinstance(p.parentWidget(), QAbstractScrollArea):
            scrolled = True  # p is a viewport: what it cuts vertically scrolls into view
        visible = visible.intersected(QRect(p.mapTo(top, p.rect().topLeft()), p.size()))
        p = p.parentWidget()
    visible = visible.intersected(top.rect())
    sideways = visible.width() < rect.width() - 1
    vertically = visible.height() < rect.height() - 1 and not scrolled
    return sideways, vertically


def _internal(w: QWidget) -> bool:
    """Qt's own buttons (tab-bar scrollers, toolbar extension, dock title buttons, line-edit clear)."""
    return w.objectName().startswith("qt_") or type(w.parentWidget()).__name__ in ("QTabBar", "QLineEdit")


def clipped_buttons(top: QWidget) -> list[str]:
    problems = []
    for b in top.findChildren(QAbstractButton):
        if not _shown(b, top) or _internal(b):
            continue
        parent = b.parentWidget()
        if parent is not None and not parent.rect().contains(b.geometry()):
            problems.append(f"{_name(b)} {b.geometry().getRect()} outside its parent {_name(parent)} "
                            f"{parent.rect().getRect()}")
            continue
        sideways, vertically = _cut_by_ancestors(b, top)
        if sideways or vertically:
            problems.append(f"{_name(b)} cut {'sideways' if sideways else 'vertically'}")
    return problems


def _label_cut(label: QLabel) -> bool:
    if hasattr(label, "shown_text"):  # ElidedLabel and WordElidedLabel
        return label.shown_text() != " ".join(label.text().split()) and bool(label.text())
    if label.wordWrap() or not label.text() or label.pixmap() is not None and not label.pixmap().isNull():
        return False
    return label.width() + 1 < label.sizeHint().width()


def cut_labels(top: QWidget) -> list[str]:
    problems = []
    for label in top.findChildren(QLabel):
        if not _shown(label, top) or label.objectName().startswith("qt_"):
            continue
        if _label_cut(label) and not (hasattr(label, "shown_text") and label.toolTip()):
            problems.append(f"{_name(label)} cut to {label.width()} px without a tooltip")
        elif _cut_by_ancestors(label, top)[0] and not label.toolTip():
            problems.append(f"{_name(label)} cut sideways by its panel")
    return problems


def _indexes(view: QAbstractItemView, limit: int = 300) -> Iterable:
    model = view.model()
    rows, stack = 0, [view.rootIndex()]
    while stack and rows < limit:
        parent = stack.pop()
        for r in range(model.rowCount(parent)):
            for c in range(model.columnCount(parent)):
                yield model.index(r, c, parent)
            first = model.index(r, 0, parent)
            if getattr(view, "isExpanded", lambda _i: False)(first):
                stack.append(first)
            rows += 1


def cut_numbers(top: QWidget) -> list[str]:
    problems = []
    for view in top.findChildren(QTreeView) + top.findChildren(QTableView):  # columns of numbers
        if not _shown(view, top) or view.model() is None:
            continue
        fm = view.fontMetrics()
        for index in _indexes(view):
            text = index.data(Qt.ItemDataRole.DisplayRole)
            rect = view.visualRect(index)
            if not isinstance(text, str) or not NUMBER.match(text) or rect.isEmpty():
                continue
            if fm.horizontalAdvance(text) + 8 > rect.width():  # 8: the cell's padding (style.py)
                problems.append(f"{type(view).__name__}({view.objectName()!r}) number {text!r} in {rect.width()} px")
    return problems


def problems(top: QWidget) -> list[str]:
    return clipped_buttons(top) + cut_labels(top) + cut_numbers(top)


def _main(sizes: list[str]) -> int:
    import tempfile

    from PySide6.QtWidgets import QApplication

    from spar_desktop.core.library.database import Library
    from spar_desktop.ui.base.style import apply_style
    from spar_desktop.ui.main_window import MainWindow
    from tests.ui.conftest import app_like_settings

    app = QApplication.instance() or QApplication([])
    apply_style(app)
    found: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        settings = app_like_settings(__import__("pathlib").Path(tmp) / "data")
        library = Library.open(settings)
        window = MainWindow(settings, library, watch=False, interactive=False)
        window.show()
        for size in sizes:
            w, h = (int(x) for x in size.split("x"))
            for view in ("library", "workspace"):
                getattr(window.views, f"show_{view}")()
                for _ in range(2):  # a dock shown by the view switch takes its width on the second pass
                    window.resize(w, h)
                    for _ in range(5):
                        app.processEvents()
                found[f"{size} {view}"] = problems(window)
        scale = window.devicePixelRatio()
        window.close()
        library.close()
    print(json.dumps({"scale": scale, "problems": found}))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
