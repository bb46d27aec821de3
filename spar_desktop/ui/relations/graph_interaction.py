"""The relation graph view's interaction, a mixin of GraphView (graph_view.py): the threshold
slider, hover, selecting a document (Open, Expand, Related files), finding one by title or path,
Rebuild, and the method/scope choices (the owner recomputes on the signals)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF


class GraphInteraction:
    """The widgets, signals and drawing methods are GraphView's."""

    def _passing(self) -> int:
        """How many edges are at or above the threshold (the weights are sorted once per payload)."""
        return int(np.searchsorted(-self._sorted, -self.threshold, side="right"))

    def _on_slider(self, value: int) -> None:
        p = self.payload
        if p is None or p.n_edges == 0 or value <= 0:
            self.threshold = -np.inf
            self.slider_label.setText("all edges")
        else:
            self.threshold = self._quantile(value / 100.0)
            self.slider_label.setText(f"≥ {self.threshold:.3g}")
        self.edges_item.set_limit(self._passing())
        self._update_status()

    def _quantile(self, q: float) -> float:
        """np.quantile's (linear) value, read from the sorted weights instead of re-sorting them."""
        s = self._ascending
        pos = q * (len(s) - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, len(s) - 1)
        return float(s[lo] + (s[hi] - s[lo]) * (pos - lo))

    def hover_text(self, row: int) -> str:
        p = self.payload
        if p is None or not 0 <= row < p.n_nodes:
            return ""
        return p.labels[row] + (f"\n{p.paths[row]}" if p.paths[row] else "")

    def _on_hovered(self, row: int) -> None:
        self.nodeHovered.emit(self.payload.labels[row] if row >= 0 and self.payload is not None else "")

    def select_row(self, row: int) -> None:
        """Select a node (as a click does): mark it, offer Open/Expand, emit fileActivated."""
        self._select(row, emit=True)

    def _select(self, row: int, emit: bool) -> None:
        p = self.payload
        if p is None or not 0 <= row < p.n_nodes:
            return
        self.selected = row
        fid = p.file_ids[row]
        self.open_button.setEnabled(fid >= 0)
        self.around_button.setEnabled(fid >= 0)
        self.expand_button.setEnabled(True)
        self._update_marks()
        self._draw_selected()
        self.status.setText(f"{p.labels[row]} — {p.paths[row]}" if p.paths[row] else p.labels[row])
        if emit and fid >= 0:
            self.fileActivated.emit(fid)

    def expand_selected(self) -> None:
        p = self.payload
        if p is None or self.selected is None:
            return
        self.focus |= {self.selected, *p.neighbors(self.selected).tolist()}
        self._update_marks()
        self._draw_focus()

    def request_neighbourhood(self) -> None:
        """Ask the owner for the selected document's neighbourhood at the chosen number of hops."""
        p = self.payload
        if p is None or self.selected is None or p.file_ids[self.selected] < 0:
            return
        self.status.setText(f"Finding the documents related to {p.labels[self.selected]}…")
        self.neighbourhoodRequested.emit(p.file_ids[self.selected], int(self.hops.currentData()))

    def _hops_changed(self) -> None:
        a = self.around
        if a is not None and int(self.hops.currentData()) != a.hops:  # re-extract around the same centre
            self.status.setText("Finding the related documents…")
            self.neighbourhoodRequested.emit(a.payload.file_ids[a.center], int(self.hops.currentData()))

    def _on_open(self) -> None:
        p = self.payload
        if p is not None and self.selected is not None and p.file_ids[self.selected] >= 0:
            self.openRequested.emit(p.file_ids[self.selected])

    def find(self, text: str) -> list[int]:
        """Rows whose title or path contains ``text`` (case-insensitive), title matches first."""
        p = self.payload
        t = text.strip().lower()
        if p is None or not t:
            return []
        by_title = [i for i, s in enumerate(p.labels) if t in s.lower()]
        seen = set(by_title)
        return by_title + [i for i, s in enumerate(p.paths) if t in s.lower() and i not in seen]

    def _on_search(self) -> None:
        rows = self.find(self.search.text())
        if not rows:
            self.status.setText(f"No document matches “{self.search.text()}”")
            return
        self.select_row(rows[0])
        self._zoom_to(rows[0])

    def _zoom_to(self, row: int) -> None:
        x, y = self.payload.positions[row]
        (x0, x1), (y0, y1) = self.plot.getViewBox().viewRange()
        w, h = (x1 - x0) / 4, (y1 - y0) / 4  # zoom in on the match
        self.plot.getViewBox().setRange(QRectF(x - w / 2, y - h / 2, w, h), padding=0)

    def _on_rebuild(self) -> None:
        self.status.setText("Rebuilding relations…")
        self.rebuildRequested.emit()

    def _ask(self, which: str) -> None:
        self.status.setText("Recomputing relations…")
        if which == "method":
            self.methodChanged.emit(self.method.currentData())
        else:
            self.scopeChanged.emit(self.scope.currentData())
