"""Fixtures that build real files (PDF, DOCX) in tmp_path with the same libraries users' files
come from, so extraction is tested against genuine structure, not mocks."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest


def _make_pdf(path: Path, pages: list[str], title: str | None = None, **save_kw) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        if text:
            # insert_textbox wraps long text inside the page like a real document would.
            page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=9)
    if title:
        doc.set_metadata({"title": title})
    doc.save(path, **save_kw)
    doc.close()
    return path


@pytest.fixture
def make_pdf(tmp_path: Path) -> Callable[..., Path]:
    def make(name: str, pages: list[str], **kw) -> Path:
        return _make_pdf(tmp_path / name, pages, **kw)

    return make


@pytest.fixture
def make_docx(tmp_path: Path) -> Callable[..., Path]:
    def make(name: str, paragraphs: list[str], table: list[list[str]] | None = None,
             title: str | None = None) -> Path:
        import docx

        d = docx.Document()
        for i, text in enumerate(paragraphs):
            if i == 0:
                d.add_heading(text, level=1)
            else:
                d.add_paragraph(text)
            if table and i == 1:  # table between the 2nd and 3rd paragraph: order must hold
                t = d.add_table(rows=len(table), cols=len(table[0]))
                for r, row in enumerate(table):
                    for c, val in enumerate(row):
                        t.cell(r, c).text = val
        if title:
            d.core_properties.title = title
        path = tmp_path / name
        d.save(str(path))
        return path

    return make
