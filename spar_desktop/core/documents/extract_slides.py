"""Presentations (.pptx, .odp): one slide = one page.

A slide's page reads "Slide N: <title>", then the text of its shapes in reading order (top to
bottom, then left to right; groups opened, tables as "Header: value" rows, chart titles), then
"Notes: <speaker notes>". Decks on shares carry videos and photos that python-pptx would load
whole, so a deck with large media is first copied (to a temporary folder) without them.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Optional
from xml.etree import ElementTree as ET

from spar_desktop.core.documents.budget import ExtractionBudget, human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_wordproc import (
    ROW, TABLE, CharBudget, odf_package, odf_text, odf_title, one_line, parse_error, q, row_cells, table_text)
from spar_desktop.core.documents.ole_kinds import ole_kind
from spar_desktop.core.documents.types import ExtractedDocument, PageText

MAX_MEDIA_BYTES = 32 * 1024 * 1024  # above this, pictures/videos are left out of a private copy
_BAND_EMU = 457_200  # half an inch: shapes whose tops are this close count as one line of layout


class _Deck:
    """Slide pages within the character and slide limits."""

    def __init__(self, fmt: str, budget: ExtractionBudget) -> None:
        self.fmt, self.budget, self.clock = fmt, budget, budget.clock()
        self.chars = CharBudget(budget.max_chars)
        self.pages: list[PageText] = []
        self.warnings: list[str] = []
        self.first_title: Optional[str] = None

    def wants(self, number: int) -> bool:
        """Whether slide ``number`` may still be read."""
        self.clock.check()
        if self.chars.full:
            return False
        if number > self.budget.max_pages:
            self.warnings.append(f"only the first {self.budget.max_pages:,} slides were read (the per-file limit)")
            return False
        return True

    def add(self, number: int, title: str, blocks: Iterable[str], notes: str) -> None:
        title = one_line(title)
        self.first_title = self.first_title or title or None
        parts = [f"Slide {number}: {title}" if title else f"Slide {number}"]
        parts.extend(b.strip() for b in blocks if b and b.strip())
        if notes.strip():
            parts.append(f"Notes: {notes.strip()}")
        text = self.chars.take("\n\n".join(parts))
        if text:
            self.pages.append(PageText(number, text))

    def document(self, title: Optional[str]) -> ExtractedDocument:
        title = one_line(title or "") or self.first_title
        warnings = tuple(self.warnings) + tuple(self.chars.warning())
        if not self.pages:
            return ExtractedDocument((), self.fmt, title, warnings, "presentation has no slides")
        return ExtractedDocument(tuple(self.pages), self.fmt, title, warnings)


# -------------------------------------------------------------------------------------- PPTX


def extract_pptx(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    """A PowerPoint 2007+ deck (an old-format deck under a .pptx name: extract_legacy.extract_pptx_file)."""
    kind = ole_kind(path)
    if kind == "encrypted":
        raise ExtractionError("presentation is password-protected")
    if kind:
        raise ExtractionError("corrupt presentation: not a PowerPoint file")
    deck = _Deck("pptx", budget)
    with _lean_copy(path, budget) as source:
        import pptx  # lazy: python-pptx pulls in lxml and Pillow

        try:
            prs = pptx.Presentation(str(source))
        except Exception as exc:
            raise ExtractionError("corrupt presentation: the file is damaged or not a PowerPoint file") from exc
        for number, slide in enumerate(prs.slides, 1):
            if not deck.wants(number):
                break
            _pptx_slide(deck, number, slide)
        title = prs.core_properties.title
    return deck.document(title)


@contextmanager
def _lean_copy(path: Path, budget: ExtractionBudget) -> Iterator[Path]:
    """``path`` itself, or a private copy without its media when they are large (python-pptx
    reads every part of the package into memory)."""
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        raise ExtractionError("corrupt presentation: the file is damaged or incomplete") from exc
    if not any(i.filename == "ppt/presentation.xml" for i in infos):
        raise ExtractionError("corrupt presentation: the file holds no slides")
    xml = [i for i in infos if i.filename.endswith((".xml", ".rels"))]
    xml_bytes = sum(i.file_size for i in xml)
    if xml_bytes > budget.max_inflated_bytes:
        raise too_large("unpacked slide content", human_bytes(xml_bytes), human_bytes(budget.max_inflated_bytes))
    if sum(i.file_size for i in infos) - xml_bytes <= MAX_MEDIA_BYTES:
        yield path
        return
    work = Path(tempfile.mkdtemp(prefix="spar-pptx-"))
    try:
        lean = work / "lean.pptx"
        keep = {i.filename for i in xml}
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(lean, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in infos:
                if info.filename in keep:
                    with src.open(info) as r, dst.open(info.filename, "w") as w:
                        shutil.copyfileobj(r, w, 1 << 20)
                elif not info.is_dir():
                    dst.writestr(info.filename, b"")  # the part stays (relationships point to it), empty
        yield lean
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _pptx_slide(deck: _Deck, number: int, slide) -> None:
    title_shape = slide.shapes.title
    title = _frame_text(title_shape) if title_shape is not None and title_shape.has_text_frame else ""
    blocks: list[str] = []
    for shape in _reading_order(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        blocks.extend(_shape_blocks(shape))
    notes = ""
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = _frame_text(slide.notes_slide.notes_text_frame)
    deck.add(number, title, blocks, notes)


def _reading_order(shapes) -> list:
    def key(shape) -> tuple[int, int]:
        top, left = shape.top, shape.left
        return ((top or 0) // _BAND_EMU, left or 0)

    items = list(shapes)
    try:
        return sorted(items, key=key)
    except (AttributeError, TypeError, ValueError):  # a shape without a position: keep file order
        return items


def _shape_blocks(shape) -> Iterator[str]:
    if hasattr(shape, "shapes") and not getattr(shape, "has_chart", False):  # a group
        for child in _reading_order(shape.shapes):
            yield from _shape_blocks(child)
    elif getattr(shape, "has_table", False) and shape.has_table:
        rows = [[_frame_text(cell) for cell in row.cells] for row in shape.table.rows]
        yield table_text(rows)
    elif getattr(shape, "has_chart", False) and shape.has_chart:
        chart = shape.chart
        if chart.has_title and chart.chart_title.has_text_frame:
            text = one_line(chart.chart_title.text_frame.text)
            if text:
                yield f"Chart: {text}"
    elif shape.has_text_frame:
        yield _frame_text(shape)


def _frame_text(obj) -> str:
    """Text of a shape/cell/frame: paragraphs as lines; python-pptx writes line breaks as \\v."""
    frame = obj.text_frame if hasattr(obj, "text_frame") else obj
    text = "\n".join(p.text.replace("\v", "\n") for p in frame.paragraphs)
    return "\n".join(" ".join(line.split()) for line in text.split("\n") if line.strip())


# --------------------------------------------------------------------------------------- ODP

DRAW_PAGE, NOTES, GROUP = q("draw:page"), q("presentation:notes"), q("draw:g")
_CLASS = q("presentation:class")
_UNITS_CM = {"cm": 1.0, "mm": 0.1, "in": 2.54, "pt": 2.54 / 72, "pc": 2.54 / 6, "px": 2.54 / 96}
_LENGTH = re.compile(r"^\s*(-?[\d.]+)\s*([a-z]*)")


def extract_odp(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    deck = _Deck("odp", budget)
    with odf_package(path, budget, "presentation") as zf:
        title = odf_title(zf)
        with zf.open("content.xml") as stream:
            try:
                _odp_pages(stream, deck)
            except ET.ParseError as exc:
                if not deck.pages:
                    raise parse_error("presentation", exc) from exc
                deck.warnings.append("the file is damaged: only its first slides were read")
    return deck.document(title)


def _odp_pages(stream, deck: _Deck) -> None:
    """Each draw:page is read when it ends, then dropped from the tree."""
    stack: list[ET.Element] = []
    number = 0
    for event, elem in ET.iterparse(stream, events=("start", "end")):
        if event == "start":
            stack.append(elem)
            continue
        stack.pop()
        if elem.tag != DRAW_PAGE:
            continue
        number += 1
        if not deck.wants(number):
            return
        _odp_page(deck, number, elem)
        if stack:
            stack[-1].remove(elem)


def _odp_page(deck: _Deck, number: int, page: ET.Element) -> None:
    title, blocks = "", []
    for shape in _odp_order(c for c in page if c.tag != NOTES):
        if not title and shape.get(_CLASS) == "title":
            title = odf_text(shape)
            continue
        blocks.extend(_odp_blocks(shape))
    notes_el = page.find(NOTES)
    notes = ""
    if notes_el is not None:
        notes = "\n".join(odf_text(f) for f in notes_el if f.get(_CLASS) == "notes")
    deck.add(number, title, blocks, notes)


def _odp_blocks(shape: ET.Element) -> Iterator[str]:
    if shape.tag == GROUP:
        for child in _odp_order(shape):
            yield from _odp_blocks(child)
        return
    table = shape.find(TABLE)
    if table is not None:
        yield table_text([row_cells(r) for r in table.iter(ROW)])
    else:
        yield odf_text(shape)


def _odp_order(shapes: Iterable[ET.Element]) -> list[ET.Element]:
    return sorted(shapes, key=_odp_key)


def _odp_key(shape: ET.Element) -> tuple[float, float]:
    """(band of half-inch rows, x): a group has no position of its own, it sits at its first child."""
    if shape.tag == GROUP:
        return min((_odp_key(child) for child in shape), default=(0.0, 0.0))
    return (round(_cm(shape.get(q("svg:y"))) / 1.27), _cm(shape.get(q("svg:x"))))


def _cm(length: Optional[str]) -> float:
    m = _LENGTH.match(length or "")
    if not m:
        return 0.0
    try:
        return float(m.group(1)) * _UNITS_CM.get(m.group(2), 1.0)
    except ValueError:
        return 0.0
