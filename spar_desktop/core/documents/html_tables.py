"""The tables of an HTML page (an Excel "web page" export saved as .xls), read by a streaming
html.parser: rows of the outermost tables, cells as text, a cell spanning columns holding its value
in the first. No tree is built, so the work is linear in the input whatever its nesting (the tree
walk it replaces was worse than quadratic on deeply nested markup). Text of a table nested in a
cell belongs to that cell, as a browser shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Optional

HIDDEN = {"script", "style", "template", "noscript"}
MAX_SPAN = 100  # a colspan of 10**9 must not make a row of a billion cells


@dataclass
class HtmlTable:
    caption: Optional[str] = None
    rows: list[list[str]] = field(default_factory=list)


class _TableReader(HTMLParser):
    def __init__(self, max_cells: int) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[HtmlTable] = []
        self.title_parts: list[str] = []
        self.depth = 0  # open <table>s
        self.row: Optional[list[str]] = None
        self.cell: Optional[list[str]] = None
        self.span = 1
        self.caption: Optional[list[str]] = None
        self.in_title = False
        self.hidden = 0
        self.cells = 0
        self.max_cells = max_cells

    @property
    def full(self) -> bool:
        return self.cells >= self.max_cells

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in HIDDEN:
            self.hidden += 1
        elif tag == "title" and not self.depth:
            self.in_title = True
        elif tag == "table":
            if self.depth == 0:
                self.tables.append(HtmlTable())
            self.depth += 1
        elif self.depth == 1 and tag == "caption":
            self.caption = []
        elif self.depth == 1 and tag == "tr":
            self._end_row()
            self.row = []
        elif self.depth == 1 and tag in ("td", "th"):
            self._end_cell()
            if self.row is None:
                self.row = []
            self.cell = []
            try:
                self.span = max(1, min(int(dict(attrs).get("colspan") or 1), MAX_SPAN))
            except ValueError:
                self.span = 1
        elif tag == "br" and self.cell is not None:
            self.cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag == "title":
            self.in_title = False
        elif tag == "table" and self.depth:
            self.depth -= 1
            if self.depth == 0:
                self._end_row()
        elif self.depth == 1 and tag == "caption" and self.caption is not None:
            self.tables[-1].caption = " ".join("".join(self.caption).split()) or None
            self.caption = None
        elif self.depth == 1 and tag == "tr":
            self._end_row()
        elif self.depth == 1 and tag in ("td", "th"):
            self._end_cell()

    def handle_data(self, data: str) -> None:
        if self.hidden:
            return
        if self.in_title:
            self.title_parts.append(data)
        elif self.caption is not None:
            self.caption.append(data)
        elif self.cell is not None:
            self.cell.append(data)
        elif self.depth > 1 and self.row is not None and self.row:
            self.row[-1] += " " + data  # a nested table's text after its cell was closed by recovery

    def _end_cell(self) -> None:
        if self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.row.extend([""] * (self.span - 1))
            self.cells += self.span
        self.cell, self.span = None, 1

    def _end_row(self) -> None:
        self._end_cell()
        if self.row is not None and self.tables:
            if any(c.strip() for c in self.row):
                self.tables[-1].rows.append(self.row)
        self.row = None


def read_html_tables(data_chunks, max_cells: int = 2_000_000) -> tuple[Optional[str], list[HtmlTable]]:
    """(page title, outermost tables) from an iterable of decoded text pieces; stops reading once
    ``max_cells`` cells were kept (the budget's row and character limits apply afterwards)."""
    reader = _TableReader(max_cells)
    for piece in data_chunks:
        reader.feed(piece)
        if reader.full:
            break
    reader.close()
    reader._end_row()
    title = " ".join("".join(reader.title_parts).split()) or None
    return title, reader.tables
