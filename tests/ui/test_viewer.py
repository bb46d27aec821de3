"""Document viewer: a PDF opens at page N with the passage highlighted; text files too."""

from __future__ import annotations

import pytest

from spar_desktop.ui.base.tasks import TaskRunner
from spar_desktop.ui.viewer.document_viewer import DocumentViewer
from spar_desktop.core.documents.page_view import fragments as _fragments
from tests.ui.conftest import write_pdf

PAGES = [
    "Introduction. This report covers the northern wind farm and its maintenance history.",
    "Findings. The gearbox bearing showed abnormal vibration levels during the spring inspection.",
    "Conclusion. Replace the bearing before winter and monitor oil temperature weekly.",
]


@pytest.fixture
def viewer(qtbot):
    runner = TaskRunner()
    viewer = DocumentViewer(runner)
    runner.setParent(viewer)
    qtbot.addWidget(viewer)
    viewer.resize(900, 700)
    viewer.show()
    yield viewer
    runner.shutdown()


def test_pdf_opens_at_page_with_highlight(qtbot, viewer, tmp_path):
    pdf = write_pdf(tmp_path / "report.pdf", PAGES)
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000) as shown:
        viewer.open_document(str(pdf), page=2, highlight="abnormal vibration levels")
    assert shown.args == [2]
    assert viewer.current_page == 2 and viewer.page_count == 3
    assert viewer.page_spin.value() == 2 and viewer.page_total.text() == "of 3"
    assert viewer.highlight_count >= 1
    assert viewer.stack.currentWidget() is viewer.scroll
    assert not viewer.page_label.pixmap().isNull()
    # The highlight is painted on the page: a yellow-ish pixel inside the first rectangle.
    x0, y0, x1, y1 = viewer.rendered.highlights[0]
    image = viewer.page_label.pixmap().toImage()
    colour = image.pixelColor(int((x0 + x1) / 2), int(y0 + 2))
    assert colour.red() > 200 and colour.blue() < 200

    with qtbot.waitSignal(viewer.page_shown, timeout=20_000) as shown:
        viewer.go_to_page(3)
    assert shown.args == [3] and viewer.highlight_count == 0  # the passage is not on page 3
    assert viewer.prev_button.isEnabled() and not viewer.next_button.isEnabled()


def test_page_numbers_are_clamped_and_bad_files_show_a_message(qtbot, viewer, tmp_path):
    pdf = write_pdf(tmp_path / "short.pdf", PAGES[:2])
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000) as shown:
        viewer.open_document(str(pdf), page=9)
    assert shown.args == [2]
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")
    with qtbot.waitSignal(viewer.load_failed, timeout=20_000):
        viewer.open_document(str(broken))
    assert viewer.stack.currentWidget() is viewer.message and "broken.pdf" in viewer.message.text()


def test_text_file_highlight_and_page_jump(qtbot, viewer, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\n" + "filler line\n" * 200 + "The Falcon project\nbudget was approved.\n", encoding="utf-8")
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000):
        viewer.open_document(str(doc), highlight="falcon project budget")  # across a line break, any case
    assert viewer.stack.currentWidget() is viewer.text
    assert viewer.highlight_count == 1
    assert len(viewer.text.extraSelections()) == 1
    start, _end = viewer.text_doc.hits[0]
    assert viewer.text_doc.text[start:start + 14] == "Falcon project"
    assert viewer.text.textCursor().position() == start


def test_long_passages_are_searched_in_fragments():
    passage = ("The gearbox bearing showed abnormal vibration levels during the spring inspection. "
               "Replace the bearing before winter and monitor oil temperature weekly, as agreed with the vendor.")
    parts = _fragments(passage)
    assert len(parts) >= 3 and all(len(p) <= 60 for p in parts)
    assert " ".join(parts).split() == passage.split()
