"""What a person sees of the index as frozen values (core/library/overview.py), and tag edits
that say what they changed (core/library/tag_edits.py): the app's ops and the CLI read these."""

from __future__ import annotations

import dataclasses
import json

import pytest

from spar_desktop.core.changes import NOTHING, Changes
from spar_desktop.core.library import overview, tag_edits
from spar_desktop.core.library.queries import FileFilter
from spar_desktop.core.library.scanner import Scanner


@pytest.fixture
def indexed(library, share):
    for name, text in (("b.md", "# Beta\nsecond"), ("A.txt", "alpha"), ("c.md", "# Gamma")):
        (share / name).write_text(text)
    return overview.scan_paths(library, [str(share)])


def test_a_scan_summary_says_what_changed(library, share, indexed):
    assert indexed.new == 3 and indexed.files_changed
    assert indexed.changes == Changes(files=True, tags=True)
    assert indexed.describe().startswith("Indexing of share: 3 new, 0 changed, 0 unchanged")
    again = overview.scan_paths(library, [str(share)])
    assert again.unchanged == 3 and not again.files_changed and again.changes is NOTHING
    with pytest.raises(dataclasses.FrozenInstanceError):
        again.new = 1  # type: ignore[misc]


def test_listing_sorts_and_caps_and_the_summary_counts(library, share, indexed):
    rows = overview.load_files(library, FileFilter())
    assert [r.name for r in rows.records] == ["A.txt", "b.md", "c.md"]  # names ignore case
    desc = overview.load_files(library, FileFilter(), sort=(0, True))
    assert [r.name for r in desc.records] == ["c.md", "b.md", "A.txt"] and desc.sorted_by == (0, True)
    capped = overview.load_files(library, FileFilter(), limit=2)
    assert len(capped.records) == 2 and capped.total == 3  # the total says a filter matched more
    summary = overview.load_summary(library)
    assert (summary.files, summary.problems, summary.roots) == (3, 0, (str(share),))
    assert summary.describe() == "3 files in 1 folder"
    state = overview.load_everything(library, FileFilter(), (0, False))
    assert state.summary == summary and state.files.total == 3 and state.tags.infos


def test_tag_edits_report_their_changes(library, share, indexed):
    ids = tuple(r.id for r in overview.load_files(library, FileFilter()).records)
    edit = tag_edits.apply_tag(library, ids[:2], None, "  Audit ")
    assert (edit.message, edit.count, edit.changes) == ("Tagged 2 files", 2, Changes(tags=True))
    tag_id = next(i for i, t in overview.load_tags(library).infos.items() if t.value == "Audit")
    details = overview.file_details(library, ids[0])
    assert any(t[0] == tag_id for t in details.tags) and details.workspaces == ()
    assert tag_edits.remove_tag(library, ids[:1], tag_id).message == "Removed the tag from 1 file"
    with pytest.raises(ValueError):
        tag_edits.apply_tag(library, ids, None, "  ")
    taxonomy = share.parent / "tax.json"
    taxonomy.write_text(json.dumps({"Finance": {"Audit reports": {}}}))
    imported = tag_edits.import_taxonomy_file(library, str(taxonomy))
    assert imported.message.startswith("Imported 2 new tags and 1 links from tax.json") and imported.changes.tags


def test_real_errors_are_loaded_first_when_the_issue_list_is_capped(library, share):
    """Thousands of unsupported archives must not push a corrupt file out of the Issues view."""
    for i in range(30):
        (share / f"a{i:02d}.gz").write_bytes(b"\x1f\x8b" + bytes(40))
    (share / "zz-broken.pdf").write_bytes(b"%PDF-1.4 not really")
    Scanner(library).scan([str(share)])
    issues = overview.load_issues(library, limit=10)
    assert issues.total == 31 and dict(issues.counts) == {"unsupported": 30, "error": 1}
    assert [r.path for r in issues.rows] == [str(share / "zz-broken.pdf")]  # the real error, listed at once
    (reason, n), = issues.reasons
    assert n == 30 and issues.more is not None
    page = issues.more("unsupported", reason, 10, 10)  # the rest a page at a time, by path
    assert [r.path for r in page] == [str(share / f"a{i:02d}.gz") for i in range(10, 20)]


def test_readable_files_of_a_format_by_path(library, share, indexed):
    md = overview.readable_files(library, "md")
    assert [p.rsplit("/", 1)[-1] for _, p in md] == ["b.md", "c.md"]
    assert overview.readable_files(library, "md", limit=1) == md[:1]
    assert overview.readable_files(library, "md", min_pages=2) == []  # text files have no pages
