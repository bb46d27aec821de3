"""Child documents, sheets and slides in the viewer; the file table and details panel on an index
holding a zip (members, a copy of a loose workbook, OCR text, a duplicate in a workspace)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from sqlalchemy import select

from spar_desktop.core.library.models import File
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.workspaces.models import Workspace, WorkspaceFile
from spar_desktop.ui.base.tasks import TaskRunner
from spar_desktop.ui.library.details import DetailsPanel
from spar_desktop.ui.library.file_table import FileTableModel
from spar_desktop.ui.library.ops import FileDetails, load_details
from spar_desktop.ui.viewer.document_viewer import DocumentViewer
from tests.ui.child_fixtures import PDF_PAGES, write_child_share, write_deck, write_workbook
from tests.ui.conftest import UI_TIMEOUT_MS

ZIP = "Finance/Reports.zip"


class _NoCancel:
    cancelled = False

    def raise_if_cancelled(self) -> None:
        pass


def run_op(op, *args):
    return op(*args, lambda _p: None, _NoCancel())


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
    viewer.release()


@pytest.fixture
def share(tmp_path: Path) -> Path:
    return write_child_share(tmp_path / "share")


@pytest.fixture
def indexed(library, share) -> dict[str, int]:
    """The share scanned; file ids by path relative to the share."""
    Scanner(library).scan([str(share)])
    with library.session() as s:
        return {rel: fid for rel, fid in s.execute(select(File.rel_path, File.id))}


def scratch_files(viewer) -> list[str]:
    root = viewer._scratch_root
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs] if root else []


# ---------------------------------------------------------------------------- viewer
def test_a_zipped_pdf_renders_from_a_private_copy_that_goes_when_another_document_opens(qtbot, viewer, share):
    path = f"{share / ZIP}!/2019/audit.pdf"
    before = sorted(os.listdir(share / "Finance"))
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000) as shown:
        viewer.open_document(path, page=2, highlight="fuel ledger was not reconciled")
    assert shown.args == [2] and viewer.page_count == len(PDF_PAGES)
    assert viewer.highlight_count >= 1 and viewer.stack.currentWidget() is viewer.scroll
    assert viewer.title.text() == "audit.pdf in Reports.zip" and viewer.title.toolTip() == path
    assert viewer.position_text == "Page 2 of 3"
    copy = viewer.member.real_path
    assert os.path.isfile(copy) and copy.startswith(tempfile.gettempdir())
    assert sorted(os.listdir(share / "Finance")) == before  # nothing written next to the user's files
    assert oct(os.stat(viewer._scratch_root).st_mode & 0o777) == "0o700"

    with qtbot.waitSignal(viewer.page_shown, timeout=20_000):  # flipping pages reuses the copy
        viewer.go_to_page(3)
    assert viewer.member.real_path == copy

    with qtbot.waitSignal(viewer.page_shown, timeout=20_000):
        viewer.open_document(f"{share / ZIP}!/notes.txt", highlight="monthly check")
    assert viewer.stack.currentWidget() is viewer.text and viewer.highlight_count == 1
    assert viewer.title.text() == "notes.txt in Reports.zip"
    qtbot.waitUntil(lambda: not os.path.exists(copy), timeout=UI_TIMEOUT_MS)
    assert viewer.member is None and scratch_files(viewer) == []


def test_closing_the_viewer_deletes_its_copies(qtbot, viewer, share):
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000):
        viewer.open_document(f"{share / ZIP}!/2019/audit.pdf")
    root = viewer._scratch_root
    assert scratch_files(viewer)
    viewer.close()
    assert not os.path.exists(root)


def test_a_missing_member_shows_a_message(qtbot, viewer, share):
    with qtbot.waitSignal(viewer.load_failed, timeout=20_000):
        viewer.open_document(f"{share / ZIP}!/gone.pdf")
    assert viewer.stack.currentWidget() is viewer.message
    assert "gone.pdf in Reports.zip" in viewer.message.text()
    assert os.listdir(viewer._scratch_root) == []  # a failed copy leaves nothing behind


def test_sheets_and_slides_are_named_and_opened_at_the_cited_one(qtbot, viewer, tmp_path, share):
    book = write_workbook(tmp_path / "book.xlsx")
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000) as shown:
        viewer.open_document(str(book), page=2)
    assert shown.args == [2] and viewer.position_text == "Sheet 2 of 3"
    assert viewer.page_word.text() == "Sheet" and viewer.next_button.toolTip().startswith("Next sheet")
    cursor = viewer.text.textCursor().position()
    assert viewer.text_doc.text[cursor:].startswith("Sheet: Fuel")

    deck = write_deck(tmp_path / "deck.pptx")
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000):
        viewer.open_document(str(deck), page=4)
    assert viewer.position_text == "Slide 4 of 4"
    # A zipped deck: text straight from the container, named as a slide too.
    with qtbot.waitSignal(viewer.page_shown, timeout=20_000):
        viewer.open_document(f"{share / ZIP}!/deck.pptx", page=3)
    assert viewer.position_text == "Slide 3 of 4" and viewer.title.text() == "deck.pptx in Reports.zip"
    cursor = viewer.text.textCursor().position()
    assert viewer.text_doc.text[cursor:].startswith("Slide 3: Risks")


# ---------------------------------------------------------------------------- file table
def test_members_are_rows_named_by_member_and_filed_in_the_containers_folder(qtbot, library, indexed):
    from spar_desktop.ui.library.ops import load_files
    from spar_desktop.core.library.queries import FileFilter

    model = FileTableModel()
    model.set_listing(run_op(load_files, library, FileFilter()))
    by_path = {model.record(r).rel_path: r for r in range(model.rowCount())}
    row = by_path[f"{ZIP}!/2019/audit.pdf"]
    cell = lambda r, c: model.data(model.index(r, c))  # noqa: E731
    assert cell(row, 0) == "audit.pdf"
    assert cell(row, 1) == "share/Finance" == cell(by_path[ZIP], 1)
    assert model.data(model.index(row, 0), 3).startswith("audit.pdf in Reports.zip\n")  # tooltip
    model.sort(1)  # sorting by folder files members with their container
    folders = [cell(r, 1) for r in range(model.rowCount())]
    assert folders == ["share/Finance"] * model.rowCount()


# ---------------------------------------------------------------------------- details
def details_of(library, file_id: int) -> FileDetails:
    return run_op(load_details, library, file_id)


@pytest.fixture
def panel(qtbot):
    panel = DetailsPanel()
    qtbot.addWidget(panel)
    panel.resize(360, 700)
    panel.show()
    return panel


def show(panel, details: FileDetails) -> None:
    panel.show_record(details.record)
    panel.show_details(details)


def visible_rows(panel) -> set[str]:
    return {name for name, label in panel.values.items() if label.isVisible()}


def test_details_of_a_member_name_its_container_and_select_it(qtbot, panel, library, share, indexed):
    details = details_of(library, indexed[f"{ZIP}!/2019/audit.pdf"])
    assert details.container == (indexed[ZIP], str(share / ZIP))
    panel.show_record(details.record)  # before the details load: the name from the path, no link
    assert panel.values["Inside"].isVisible() and panel.values["Inside"].text() == "Reports.zip"
    assert not panel.open_button.isEnabled() and panel.view_button.isEnabled()
    panel.show_details(details)
    assert panel.values["Folder"].text() == "share/Finance"
    with qtbot.waitSignal(panel.container_requested) as requested:
        panel.values["Inside"].linkActivated.emit(f"file:{indexed[ZIP]}")
    assert requested.args == [indexed[ZIP]]
    assert f'href="file:{indexed[ZIP]}"' in panel.values["Inside"].text()
    assert "Contains" not in visible_rows(panel) and "Copies" not in visible_rows(panel)


def test_details_of_a_container_count_its_members(qtbot, panel, library, indexed):
    show(panel, details_of(library, indexed[ZIP]))
    assert panel.values["Contains"].text() == "4 documents"
    assert "Inside" not in visible_rows(panel) and panel.open_button.isEnabled()


def test_details_list_copies_ocr_text_and_workspace_states(qtbot, panel, library, share, indexed):
    loose, zipped = indexed["Finance/book.xlsx"], indexed[f"{ZIP}!/book.xlsx"]
    with library.session() as s:
        s.get(File, loose).extra = {"text_source": "ocr"}
        ws = Workspace(name="audit", collection="ws_audit")
        s.add(ws)
        s.flush()
        s.add(WorkspaceFile(workspace_id=ws.id, file_id=loose, path="p", state="ready", error="text from OCR"))
        s.add(WorkspaceFile(workspace_id=ws.id, file_id=zipped, path="q", state="duplicate",
                            error="same content as /share/Finance/book.xlsx"))
    details = details_of(library, loose)
    assert details.text_from_ocr and details.copies == (f"{share / ZIP}!/book.xlsx",)
    show(panel, details)
    copies = panel.values["Copies"]
    assert copies.text().splitlines()[0] == "1 other file with the same content"
    assert details.copies[0] in copies.toolTip()
    assert panel.values["Text"].text().startswith("from OCR")
    assert panel.values["Workspaces"].text() == "audit: ready (text from OCR)"

    show(panel, details_of(library, zipped))
    assert panel.values["Workspaces"].text() == "audit: duplicate of /share/Finance/book.xlsx"
    assert "Text" not in visible_rows(panel)


# ---------------------------------------------------------------------------- hits and citations
def make_hit(path: str, start: int, end: int, also_at: tuple[str, ...] = ()):
    from spar_desktop.core.workspaces.search import WorkspaceHit

    return WorkspaceHit(1, 7, path, None, start, end, 0.9, None, None, "Diesel litres per site", None, "c1",
                        also_at=also_at)


def test_search_hits_name_sheets_and_slides_and_where_copies_are():
    from spar_desktop.ui.workspaces.search_results import hit_html, hit_tooltip

    copies = ("/share/Finance/book.xlsx", "/backup/book.xlsx", "/old/book.xlsx", "/old2/book.xlsx")
    html_text = hit_html(make_hit("/share/Finance/Reports.zip!/book.xlsx", 2, 2, copies), "Diesel")
    from spar_desktop.ui.base.style import colours

    muted = colours()["muted"]  # the theme's (test_theme.py checks its contrast)
    assert f"<b>book.xlsx</b> <span style='color:{muted}'>in Reports.zip</span>" in html_text
    assert "· sheet 2" in html_text
    assert "also at: /share/Finance/book.xlsx, /backup/book.xlsx and 2 more" in html_text
    assert "/old2/book.xlsx" in hit_tooltip(make_hit("/d/book.xlsx", 2, 2, copies))
    plain = hit_html(make_hit("/share/deck.pptx", 3, 4), "Risks")
    assert "· slides 3-4" in plain and "also at" not in plain and " in " not in plain.split("·")[0]
    assert "· pp. 1-2" in hit_html(make_hit("/share/a.pdf", 1, 2), "x")


def test_citation_chips_name_the_sheet(qtbot):
    from spar_desktop.core.chat.prompt import Citation, Passage
    from spar_desktop.ui.chat.view import MessageBubble

    bubble = MessageBubble("assistant")
    qtbot.addWidget(bubble)
    passage = Passage(1, 7, "/share/Reports.zip!/book.xlsx", None, 2, 2, "c1", 0.9, "text", "Diesel litres")
    bubble.finish(message_id=None, text="Diesel use is listed [1].", status="done", mode=None, model="m",
                  error=None, passages=(passage,), citations=(Citation(1, 7, passage.path, 2, 2, "c1", True),))
    chip = bubble.chip_buttons()[0]
    assert chip.text() == "[1] book.xlsx · sheet 2"
    assert chip.toolTip().splitlines()[1] == "sheet 2"


# ---------------------------------------------------------------------------- a built workspace
BUILD_TIMEOUT_MS = 180_000


def build_finance_workspace(tmp_path: Path):
    """A data dir holding workspace 'finance' over the child share, built and closed (as
    conftest.build_ops_workspace leaves one); also the file ids by relative path."""
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.workspaces.engine import engine_for, release_engine
    from spar_desktop.core.workspaces.manager import Workspaces
    from tests.ui.conftest import app_like_settings

    settings = app_like_settings(tmp_path / "data")
    share = write_child_share(tmp_path / "share")
    lib = Library.open(settings)
    try:
        Scanner(lib).scan([str(share)])
        mgr = Workspaces(lib, engine_for(settings, get_encoder("cpu")))
        mgr.create("finance", tags=["Finance"])
        assert mgr.build("finance").duplicates == 1
        with lib.session() as s:
            ids = {rel: fid for rel, fid in s.execute(select(File.rel_path, File.id))}
    finally:
        lib.close()
        release_engine(settings)
    return settings, ids


def test_a_built_workspace_shows_copies_under_hits_and_duplicates_in_details(qtbot, window_on, tmp_path):
    settings, indexed = build_finance_workspace(tmp_path)
    w = window_on(settings)
    panel = w.workspace_panel
    qtbot.waitUntil(lambda: panel.item_for("finance") is not None, timeout=UI_TIMEOUT_MS)
    assert panel.select_workspace("finance")
    qtbot.waitUntil(lambda: panel.search_box.isEnabled(), timeout=UI_TIMEOUT_MS)
    panel.search_box.setText("diesel litres")
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=BUILD_TIMEOUT_MS):
        panel.search_box.returnPressed.emit()
    hit = panel.hit(0)
    assert hit is not None and hit.also_at and hit.path.endswith("book.xlsx")
    item = panel.results.item(0)
    assert "The same content is also at:" in item.toolTip() and hit.also_at[0] in item.toolTip()

    duplicate = next(fid for rel, fid in indexed.items() if rel.endswith("book.xlsx") and fid != hit.file_id)
    w._show_file_by_id(duplicate)
    qtbot.waitUntil(lambda: w.details.details is not None and w.details.details.record.id == duplicate,
                    timeout=UI_TIMEOUT_MS)
    assert w.details.values["Workspaces"].text() == f"finance: duplicate of {hit.path}"
    assert w.details.values["Copies"].text().startswith("1 other file with the same content")
    qtbot.waitUntil(w.runner.is_idle, timeout=UI_TIMEOUT_MS)
