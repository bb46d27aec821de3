"""First run: the empty state offers the bundled sample corpus; importing copies and indexes it."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from sqlalchemy import func, select

from spar_desktop.core.library.models import File, Tag, TagSource
from spar_desktop.ui.base.tasks import TaskState
from spar_desktop.ui.library.first_run import SAMPLE_DIR_NAME, resources_dir, sample_corpus_dir
from tests.core.library.test_sample import CHILDREN

SAMPLE = sample_corpus_dir()


def test_resources_are_found_from_the_checkout_or_the_env(monkeypatch, tmp_path):
    assert resources_dir() is not None and resources_dir().name == "resources"
    import spar_desktop

    monkeypatch.setattr(spar_desktop, "__file__", str(tmp_path / "site" / "spar_desktop" / "__init__.py"))
    monkeypatch.setenv("SPAR_RESOURCES", str(tmp_path))
    assert resources_dir() == tmp_path


@pytest.mark.skipif(SAMPLE is None, reason="the sample corpus (resources/sample_corpus) is not built yet")
def test_sample_corpus_import(qtbot, window, settings, library):
    assert window.file_panel.library_empty
    assert window.file_panel.empty.sample_button.isVisibleTo(window.file_panel.empty)
    handle = window.controller.import_sample()
    qtbot.waitUntil(lambda: handle.done and window.runner.is_idle(), timeout=120_000)
    assert handle.state is TaskState.SUCCEEDED, handle.error
    result = handle.result
    copy = settings.data_dir / SAMPLE_DIR_NAME
    assert result.target == str(copy) and copy.is_dir()
    assert not (copy / "_taxonomy").exists() and not (copy / "_dates.json").exists()  # metadata not indexed
    dates = json.loads((SAMPLE / "_dates.json").read_text(encoding="utf-8"))
    rel, iso = next(iter(dates.items()))
    assert datetime.fromtimestamp((copy / rel).stat().st_mtime).date() == datetime.fromisoformat(iso).date()
    with library.session() as s:
        files = s.scalar(select(func.count(File.id)))
        top = s.scalar(select(func.count(File.id)).where(File.parent_id.is_(None)))
        outside = s.scalar(select(func.count(File.id)).where(~File.path.startswith(str(copy))))
        taxonomy = s.scalar(select(func.count(Tag.id)).where(Tag.source == TagSource.TAXONOMY))
    assert top == result.copied and outside == 0  # only the copy, never the install dir
    assert files - top == len(CHILDREN)  # the members of the corpus's zip and the mail's attachment
    assert taxonomy > 0 and result.assigned > 0
    assert not window.file_panel.library_empty
    assert window.file_panel.model.total == files - result.scan.missing
    groups = [window.tag_panel.model.data(window.tag_panel.model.index(r, 0))
              for r in range(window.tag_panel.model.rowCount())]
    assert groups[:3] == ["Folders", "Dates", "Taxonomy"]


@pytest.mark.skipif(SAMPLE is None, reason="the sample corpus (resources/sample_corpus) is not built yet")
def test_the_app_and_the_cli_import_the_sample_into_the_same_index(tmp_path, capsys):
    """Issue 14.11: `spar index resources/sample_corpus` indexed the corpus's metadata files and left
    33 files dated at checkout time; the app restored dates and imported the taxonomy."""
    from spar_desktop.cli import main
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.progress import CancelToken
    from spar_desktop.ui.library.first_run import import_sample_corpus
    from tests.core.library.test_sample import index_view

    app_settings = load_settings(tmp_path / "app")
    lib = Library.open(app_settings)
    try:
        result = import_sample_corpus(lib, SAMPLE, app_settings.data_dir / SAMPLE_DIR_NAME, lambda p: None, CancelToken())
    finally:
        lib.close()
    assert result.scan.new == result.copied > 0 and result.taxonomy_tags > 0 and result.assigned > 0
    app = index_view(tmp_path / "app")
    assert main(["--data-dir", str(tmp_path / "cli"), "index", str(SAMPLE), "--quiet"]) == 0
    assert index_view(tmp_path / "cli") == app
    assert main(["--data-dir", str(tmp_path / "cli2"), "sample", "--quiet"]) == 0
    assert index_view(tmp_path / "cli2") == app
    capsys.readouterr()
