"""The viewer's page view without a window: where a passage is highlighted on a rendered PDF page
and in a file's text (core/documents/page_view.py)."""

from __future__ import annotations

from spar_desktop.core.documents.page_view import find_spans, fragments, load_text, render_pdf_page
from spar_desktop.core.progress import CancelToken


def _quiet(_progress) -> None:
    pass


def test_long_passages_are_searched_in_fragments():
    passage = ("The gearbox bearing showed abnormal vibration levels during the spring inspection. "
               "Replace the bearing before winter and monitor oil temperature weekly, as agreed with the vendor.")
    parts = fragments(passage)
    assert len(parts) >= 3 and all(len(p) <= 60 for p in parts)
    assert " ".join(parts).split() == passage.split()


def test_spans_ignore_case_and_line_breaks():
    text = "Intro.\nThe Falcon\nproject starts in May. The falcon project ends in June."
    spans = find_spans(text, "falcon project")
    assert [text[a:b].split() for a, b in spans] == [["Falcon", "project"], ["falcon", "project"]]


def test_pdf_page_is_rendered_with_the_passage_rectangles(make_pdf):
    path = make_pdf("report.pdf", ["Alpha page about turbines.", "Beta page about pumps."], title="Plant Report")
    page = render_pdf_page(str(path), 5, None, 1.0, "about pumps", _quiet, CancelToken())
    assert (page.page, page.page_count, page.title) == (2, 2, "Plant Report")  # clamped to the last page
    assert len(page.samples) == page.stride * page.height
    assert len(page.highlights) == 1
    x0, y0, x1, y1 = page.highlights[0]
    assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
    fitted = render_pdf_page(str(path), 1, 300, 1.0, None, _quiet, CancelToken())
    assert fitted.width == 300 and fitted.highlights == ()


def test_text_hits_point_at_the_passage(make_pdf):
    path = make_pdf("report.pdf", ["Alpha page about turbines.", "Beta page about pumps."])
    doc = load_text(str(path), "about pumps", _quiet, CancelToken())
    assert doc.format == "pdf" and len(doc.page_offsets) == 2 and not doc.truncated
    assert [doc.text[a:b] for a, b in doc.hits] == ["about pumps"]
    assert doc.hits[0][0] >= doc.page_offsets[1]
