"""The lazy file table against the in-memory listing it replaces: the same rows in the same
order for each column and filter, read a page at a time; sorting, row_of, problem colours."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from spar_desktop.core.config import Settings
from spar_desktop.core.library import overview
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import FileStatus
from spar_desktop.core.library.queries import FileFilter
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.ui.library import file_table
from spar_desktop.ui.library.file_panel import FilePanel
from spar_desktop.ui.library.file_table import COLUMNS, PROBLEM_COLOURS, FileTableModel
from spar_desktop.ui.library.ops import load_files


def run_op(op, *args, **kwargs):
    return op(*args, lambda _p: None, None, **kwargs)


@pytest.fixture
def library(tmp_path: Path):
    share = tmp_path / "share"
    for i in range(450):
        folder = share / ["Finance/2023", "HR", "Board", ""][i % 4]
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{'Report' if i % 3 else 'minutes'}-{(i * 37) % 450:03d}.{['md', 'txt', 'csv'][i % 3]}"
        (folder / name).write_text("x" * (i % 7))  # empty files among them: problem rows
        os.utime(folder / name, (1_600_000_000 + i * 86_400 * 5,) * 2)
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    yield lib
    lib.close()


def rows_of(model: FileTableModel) -> list[tuple[str, ...]]:
    return [tuple(model.data(model.index(r, c)) for c in range(len(COLUMNS))) for r in range(model.rowCount())]


def test_the_lazy_model_shows_the_in_memory_rows_for_each_sort_and_filter(qtbot, library, monkeypatch):
    monkeypatch.setattr(file_table, "PAGE", 50)  # several pages over this index
    model = FileTableModel()
    for flt in (FileFilter(), FileFilter(formats=("md", "csv")), FileFilter(statuses=(FileStatus.EMPTY,))):
        listing = run_op(load_files, library, flt)
        model.set_listing(listing)
        assert model.page_reads == 0  # nothing read until a row is shown
        for column in range(len(COLUMNS)):
            for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
                model.sort(column, order)
                reference = overview.load_files(library, flt, (column, order == Qt.SortOrder.DescendingOrder)).records
                assert [model.record(r).id for r in range(model.rowCount())] == [r.id for r in reference]
                assert model.total == len(reference)
        assert rows_of(model)  # the cells of every row format (dates, sizes, formats)
    model.sort(0, Qt.SortOrder.AscendingOrder)


def test_rows_are_read_by_the_page_and_found_by_id(qtbot, library, monkeypatch):
    monkeypatch.setattr(file_table, "PAGE", 50)
    monkeypatch.setattr(file_table, "KEPT_PAGES", 2)
    model = FileTableModel()
    model.set_listing(run_op(load_files, library, FileFilter()))
    reference = overview.load_files(library, FileFilter()).records
    assert model.rowCount() == len(reference) == 450
    assert model.data(model.index(449, 0)) == reference[449].name and model.page_reads == 1
    assert model.record(0) == reference[0] and model.record(10) == reference[10] and model.page_reads == 2
    model.record(120)  # a third page: the oldest goes, and is read again when shown again
    model.record(449)
    assert model.page_reads == 4
    target = reference[333]
    assert model.row_of(target.id) == 333 and model.row_of(10**9) == -1
    empty = next(r for r, rec in enumerate(reference) if rec.status == FileStatus.EMPTY)
    assert model.data(model.index(empty, 0), Qt.ItemDataRole.ForegroundRole) == PROBLEM_COLOURS[FileStatus.EMPTY]


def test_the_panel_counts_selects_and_keeps_the_selection_across_a_reload(qtbot, library):
    panel = FilePanel()
    qtbot.addWidget(panel)
    panel.set_rows(run_op(load_files, library, FileFilter()), "")
    assert panel.count_label.text() == "450 files"
    reference = overview.load_files(library, FileFilter()).records
    assert panel.select_file(reference[400].id) and panel.current_record() == reference[400]
    panel.set_rows(run_op(load_files, library, FileFilter(), sort=(3, True)), "by size")
    assert panel.current_record() == reference[400] and panel.filter_label.text() == "  ·  by size"


def test_a_listing_shown_with_its_first_ids_shows_every_row_and_takes_the_rest_in_place(qtbot, library, monkeypatch):
    """Start-up reads the first ids and the count (not a million ids): the rows past them say they
    are being listed until the whole order arrives, which fills them in, changes no row shown and
    resets nothing."""
    from spar_desktop.core.library.file_pages import listing
    from spar_desktop.ui.library.ops import complete_listing

    monkeypatch.setattr(file_table, "PAGE", 50)
    reference = overview.load_files(library, FileFilter()).records
    model = FileTableModel()
    first = listing(library, FileFilter(), first=120)
    assert len(first.order.ids) == 120 and first.total == 450 and not first.order.complete
    model.set_listing(first)
    assert model.rowCount() == 450
    assert [model.record(r).id for r in (0, 99)] == [reference[r].id for r in (0, 99)]
    assert model.record(120) is None and model.data(model.index(449, 0)) == file_table.LISTING  # not read yet
    assert model.data(model.index(449, 1)) is None
    resets, changed = [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.dataChanged.connect(lambda a, b: changed.append((a.row(), b.row())))
    model.complete(first, run_op(complete_listing, first))
    assert not resets and changed == [(0, 449)] and model.rowCount() == 450
    assert model.data(model.index(449, 0)) == reference[449].name and model.row_of(reference[400].id) == 400
    assert [model.record(r).id for r in range(450)] == [r.id for r in reference]
    whole = listing(library, FileFilter(), first=1000)  # fewer files than asked: complete at once
    assert whole.order.complete and whole.total == 450
