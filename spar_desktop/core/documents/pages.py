"""How a page span is named to a person: a sheet of a workbook, a slide of a deck, a page else.

Spreadsheets and decks are page-aware (one sheet or slide per page), so a citation can say
"sheet 2" or "slides 3-4" and the viewer opens there.
"""

from __future__ import annotations

import os

_SHEET = {".xlsx", ".xlsm", ".xls", ".ods"}
_SLIDE = {".pptx", ".pptm", ".ppt", ".odp"}


def page_unit(path: str) -> str:
    """'sheet', 'slide' or 'page' for a (possibly virtual) path."""
    ext = os.path.splitext(path.rsplit("!/", 1)[-1])[1].lower()
    return "sheet" if ext in _SHEET else "slide" if ext in _SLIDE else "page"


def page_span_label(path: str, start: int, end: int) -> str:
    """'p. 3', 'pp. 3-4', 'sheet 2', 'slides 3-4'."""
    unit = page_unit(path)
    if unit == "page":
        return f"p. {start}" if start == end else f"pp. {start}-{end}"
    return f"{unit} {start}" if start == end else f"{unit}s {start}-{end}"
