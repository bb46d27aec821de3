"""Hostile .sparws files: every malformed manifest ends as a SparwsError with a message, never a
traceback, and a failed import writes nothing (no workspace, file row, query or thread; no file
in the data dir or elsewhere). Imported names are cleaned and unique; entries outside this index
or outside its indexed folders are dropped and reported."""

from __future__ import annotations

import json
import re
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from spar_desktop.core.chat import share as chat_share
from spar_desktop.core.chat.models import ChatMessage, ChatThread
from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.workspaces import sparws
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.models import QueryLogEntry, Workspace, WorkspaceFile
from spar_desktop.core.workspaces.sparws import PATHS_NOTE, SparwsError


def import_workspace(mgr, path, name=None):
    return sparws.import_workspace(mgr, path, name, threads=chat_share)  # threads travel, as in the app


def export_workspace(mgr, name, out):
    return sparws.export_workspace(mgr, name, out, threads=chat_share)


@pytest.fixture
def env(tmp_path: Path):
    share = tmp_path / "share"
    share.mkdir()
    for name, text in (("gearbox.md", "Gearbox oil contamination."), ("blade.md", "Blade crack at Site A."),
                       ("budget.md", "Budget 1.2 million.")):
        (share / name).write_text(text, encoding="utf-8")
    lib = Library.open(load_settings(tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    yield Workspaces(lib), tmp_path
    lib.close()


def index_files(mgr: Workspaces) -> list[dict[str, Any]]:
    with mgr.library.session() as s:
        return [{"path": p, "rel_path": r, "content_hash": h}
                for p, r, h in s.execute(select(File.path, File.rel_path, File.content_hash).order_by(File.path))]


def good_manifest(mgr: Workspaces, **changes: Any) -> dict[str, Any]:
    m = {"format": "sparws", "version": 1, "name": "shared", "filter": {"formats": ["md"], "all_files": False},
         "files": index_files(mgr),
         "threads": [{"title": "t", "messages": [
             {"role": "user", "content": "why?"},
             {"role": "assistant", "content": "oil [1]", "passages": [
                 {"n": 1, "path": index_files(mgr)[0]["path"], "page_start": 1, "score": 0.5, "text": "oil"}]}]}],
         "query_history": [{"query": "gearbox", "session": "s1"}]}
    m.update(changes)
    return m


def write_sparws(path: Path, manifest: Any = None, raw: bytes | None = None,
                 compression: int = zipfile.ZIP_DEFLATED) -> Path:
    data = raw if raw is not None else json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        zf.writestr("manifest.json", data)
    return path


def snapshot(mgr: Workspaces, tmp: Path) -> tuple:
    """Everything an import could leave behind: rows of every table it writes, and the files
    under the test's directory (the data dir and the rest), by name."""
    with mgr.library.session() as s:
        rows = tuple(s.scalar(select(func.count()).select_from(t))
                     for t in (Workspace, WorkspaceFile, QueryLogEntry, ChatThread, ChatMessage))
    files = frozenset(str(p.relative_to(tmp)) for p in tmp.rglob("*") if "sparws" not in p.name)
    return rows, files


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


HOSTILE_RAW: dict[str, tuple[bytes, str]] = {
    # JSON nested 100,000 levels inside the filter: RecursionError in json.loads
    "deep nesting": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {"formats": '
                     + deep(100_000).encode() + b'}, "files": []}', "nested too deeply"),
    # deep, but not deep enough for json to fail: still refused before anything reads it
    "nesting json accepts": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {}, "files": [], '
                             b'"threads": [' + deep(500).encode() + b']}', "nested too deeply"),
    # a 5,000-digit integer: Python's int-string conversion limit
    "5000-digit int": (b'{"format": "sparws", "version": ' + b"9" * 5000 + b', "name": "x", "filter": {}, "files": []}',
                       "out of range"),
    "4000-digit int in a passage": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {}, "files": [], '
                                    b'"threads": [{"messages": [{"role": "assistant", "passages": [{"n": 1, "score": '
                                    + b"9" * 4000 + b'}]}]}]}', "out of range"),
    "NaN in a filter": (b'{"format": "sparws", "version": 1, "name": "x", "files": [], "filter": {"groups": [{"label": "a",'
                        b' "tags": [{"tag_id": 1, "key": "k", "value": "v", "score": NaN}]}]}}', "NaN"),
    "Infinity in a passage": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {}, "files": [], "threads": '
                              b'[{"messages": [{"role": "assistant", "passages": [{"n": 1, "score": Infinity}]}]}]}',
                              "Infinity"),
    "-Infinity": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {"tolerance": -Infinity}, "files": []}',
                  "Infinity"),
    "1e999 overflows to infinity": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {}, "files": [], '
                                    b'"threads": [{"messages": [{"role": "assistant", "passages": [{"n": 1, "score": 1e999}]}]}]}',
                                    "out of range"),
    "not UTF-8": (b'{"format": "sparws", "name": "\xff\xfe"}', "not UTF-8"),
    "NUL in a query": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {}, "files": [], '
                       b'"query_history": [{"query": "a\\u0000b"}]}', "NUL"),
    "lone surrogate in a path": (b'{"format": "sparws", "version": 1, "name": "x", "filter": {}, '
                                 b'"files": [{"path": "/a/\\udc80.md"}]}', "surrogate"),
}

# Wrong types anywhere, each with the words the message must hold.
WRONG_TYPES: dict[str, tuple[dict[str, Any], str]] = {
    "version is true": ({"version": True}, "invalid version"),
    "name is a number": ({"name": 7}, "name"),
    "filter is a list": ({"filter": []}, "filter is missing"),
    "formats is a number": ({"filter": {"formats": 5}}, "'formats'"),
    "formats holds a dict": ({"filter": {"formats": [{"a": 1}]}}, "'formats'"),
    "request is a list": ({"filter": {"request": ["a"]}}, "'request'"),
    "group without label": ({"filter": {"groups": [{"tags": []}]}}, "no label"),
    "tag id is text": ({"filter": {"groups": [{"label": "a", "tags": [{"tag_id": "1", "key": "k", "value": "v"}]}]}},
                       "malformed tag"),
    "tag with unknown field": ({"filter": {"groups": [{"label": "a", "tags": [
        {"tag_id": 1, "key": "k", "value": "v", "evil": 1}]}]}}, "malformed tag"),
    "since is not a date": ({"filter": {"since": "yesterday"}}, "'since'"),
    "until is a number": ({"filter": {"until": 2023}}, "'until'"),
    "pinned holds text": ({"filter": {"pinned": ["1"]}}, "'pinned'"),
    "tolerance is negative": ({"filter": {"tolerance": -1}}, "'tolerance'"),
    "all_files is text": ({"filter": {"all_files": "yes"}}, "'all_files'"),
    "files is a dict": ({"files": {"a": 1}}, "file list"),
    "file path is a number": ({"files": [{"path": 5}]}, "no path"),
    "file path is empty": ({"files": [{"path": " "}]}, "no path"),
    "content hash is a list": ({"files": [{"path": "/a", "content_hash": ["x"]}]}, "content_hash"),
    "content hash too long": ({"files": [{"path": "/a", "content_hash": "x" * 500}]}, "too long"),
    "threads is a dict": ({"threads": {"a": 1}}, "'threads'"),
    "history is text": ({"query_history": "gearbox"}, "'query_history'"),
}


@pytest.mark.parametrize("label", list(HOSTILE_RAW))
def test_hostile_json_is_refused_with_a_message_and_nothing_is_written(env, label):
    mgr, tmp = env
    raw, words = HOSTILE_RAW[label]
    path = write_sparws(tmp / "hostile.sparws", raw=raw)
    before = snapshot(mgr, tmp)
    with pytest.raises(SparwsError, match=words) as caught:
        import_workspace(mgr, path)
    assert len(str(caught.value)) < 300  # a sentence, not a dump of the file
    assert snapshot(mgr, tmp) == before


@pytest.mark.parametrize("label", list(WRONG_TYPES))
def test_wrong_types_anywhere_are_refused_with_a_message_and_nothing_is_written(env, label):
    mgr, tmp = env
    changes, words = WRONG_TYPES[label]
    path = write_sparws(tmp / "wrong.sparws", good_manifest(mgr, **changes))
    before = snapshot(mgr, tmp)
    with pytest.raises(SparwsError, match=words):
        import_workspace(mgr, path)
    assert snapshot(mgr, tmp) == before


def test_the_good_manifest_the_hostile_ones_start_from_imports(env):
    mgr, tmp = env
    report = import_workspace(mgr, write_sparws(tmp / "good.sparws", good_manifest(mgr)))
    assert (report.name, report.matched_by_hash, report.threads, report.queries) == ("shared", 3, 1, 1)
    assert report.not_found == [] and report.outside_roots == []


def _zip_with_claimed_size(path: Path, data: bytes, claimed: int) -> Path:
    """A stored member whose headers claim ``claimed`` bytes (a zip bomb or a liar)."""
    write_sparws(path, raw=data, compression=zipfile.ZIP_STORED)
    blob = bytearray(path.read_bytes())
    struct.pack_into("<I", blob, 22, claimed)  # local header: uncompressed size
    central = blob.rindex(b"PK\x01\x02")
    struct.pack_into("<I", blob, central + 24, claimed)  # central directory: uncompressed size
    path.write_bytes(bytes(blob))
    return path


def test_damaged_and_oversized_archives_are_refused_with_a_message(env):
    mgr, tmp = env
    good = json.dumps(good_manifest(mgr)).encode()
    cases: dict[str, tuple[Path, str]] = {
        "claims 3 GB": (_zip_with_claimed_size(tmp / "big.sparws", good, 3_000_000_000), "unpack to 3000 MB"),
        "claims fewer bytes": (_zip_with_claimed_size(tmp / "liar.sparws", good, 100), "Bad CRC"),
    }
    twice = tmp / "twice.sparws"
    with zipfile.ZipFile(twice, "w") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr("manifest.json", good)
        zf.writestr("manifest.json", b"{}")
    cases["manifest twice"] = (twice, "2 times")
    odd = write_sparws(tmp / "method.sparws", raw=good, compression=zipfile.ZIP_STORED)
    blob = bytearray(odd.read_bytes())
    struct.pack_into("<H", blob, 8, 99)  # an unknown compression method (local header)
    struct.pack_into("<H", blob, blob.rindex(b"PK\x01\x02") + 10, 99)  # and central directory
    odd.write_bytes(bytes(blob))
    cases["unknown compression"] = (odd, "cannot be unpacked")
    flipped = write_sparws(tmp / "flip.sparws", raw=good * 20)
    blob = bytearray(flipped.read_bytes())
    for i in range(60, 100):
        blob[i] ^= 0x5A  # corrupt the deflate stream (it starts after the 43-byte local header)
    flipped.write_bytes(bytes(blob))
    cases["corrupt deflate"] = (flipped, "damaged|not a valid zip")
    (tmp / "folder.sparws").mkdir()
    cases["a folder"] = (tmp / "folder.sparws", "not a file")
    cases["missing"] = (tmp / "missing.sparws", "not a file")
    before = snapshot(mgr, tmp)
    for label, (path, words) in cases.items():
        with pytest.raises(SparwsError, match=words):
            import_workspace(mgr, path)
    assert snapshot(mgr, tmp) == before


def test_a_failure_while_importing_threads_undoes_the_whole_import(env, monkeypatch):
    import spar_desktop.core.chat.share as share

    mgr, tmp = env
    real = share.import_threads

    def half_then_fail(library, name, threads):
        real(library, name, threads)  # rows are added in the import's transaction...
        raise SparwsError("the disk filled up")  # ...then something fails

    monkeypatch.setattr(share, "import_threads", half_then_fail)
    before = snapshot(mgr, tmp)
    with pytest.raises(SparwsError, match="disk filled"):
        import_workspace(mgr, write_sparws(tmp / "t.sparws", good_manifest(mgr)))
    assert snapshot(mgr, tmp) == before  # no workspace, file rows, queries or threads left


def test_imported_names_are_cleaned_and_unique_ignoring_case(env):
    mgr, tmp = env
    mgr.create("Shared", tags=(), types=["md"])
    r = import_workspace(mgr, write_sparws(tmp / "a.sparws", good_manifest(mgr, name="shared")))
    assert r.name == "shared (2)" and r.renamed_from == "shared"
    hostile = "evil\x1b]0;pwned\x07/../name\nforged\r\u202e"
    r = import_workspace(mgr, write_sparws(tmp / "b.sparws", good_manifest(mgr, name=hostile)))
    assert r.name == "evil ]0;pwned -..-name forged" and r.renamed_from == hostile
    r = import_workspace(mgr, write_sparws(tmp / "c.sparws", good_manifest(mgr, name="\x1b\x07 ")))
    assert r.name == "imported workspace"
    with pytest.raises(SparwsError, match="already exists"):
        import_workspace(mgr, write_sparws(tmp / "d.sparws", good_manifest(mgr)), name="SHARED")
    with pytest.raises(SparwsError, match="path separator"):
        import_workspace(mgr, write_sparws(tmp / "e.sparws", good_manifest(mgr)), name="a/b")
    assert import_workspace(mgr, write_sparws(tmp / "f.sparws", good_manifest(mgr)), name=" mine ").name == "mine"


@pytest.mark.parametrize("bad,words", [("", "needs a name"), ("a/b", "path separator"), ("a\\b", "path separator"),
                                       ("x\x1b[2Jy", "U+001B"), ("nul\x00", "U+0000"), ("two\nlines", "U+000A"),
                                       ("\u202eevil", "U+202E"), ("x" * 201, "200 characters")])
def test_workspace_names_with_control_characters_or_separators_are_refused(env, bad, words):
    mgr, _ = env
    with pytest.raises(WorkspaceError, match=re.escape(words)):
        mgr.create(bad, types=["md"])
    assert mgr.list() == []


def test_names_are_unique_ignoring_case_and_unicode_names_are_fine(env):
    mgr, _ = env
    mgr.create("Café 日本 🙂", types=["md"])
    with pytest.raises(WorkspaceError, match="already exists"):
        mgr.create("CAFÉ 日本 🙂", types=["md"])


def test_entries_not_in_the_index_or_outside_indexed_folders_are_dropped_and_reported(env):
    mgr, tmp = env
    files = index_files(mgr)
    with mgr.library.session() as s:  # a stale row: its folder was removed from the index
        s.execute(update(File).where(File.path == files[0]["path"]).values(folder_id=None))
    stranger = {"path": "/etc/passwd", "rel_path": "../../etc/passwd", "content_hash": "0" * 64}
    r = import_workspace(mgr, write_sparws(tmp / "d.sparws", good_manifest(mgr, files=files + [stranger])))
    assert r.files_total == 4 and r.matched_by_hash == 2
    assert r.not_found == ["/etc/passwd"] and r.outside_roots == [files[0]["path"]]
    kept = [f.path for f in mgr.files(r.name)]
    assert kept == [f["path"] for f in files[1:]]  # dropped, not kept as 'missing' rows
    assert mgr.explain(r.name).admitted == 2


def test_the_export_says_its_paths_are_absolute(env):
    mgr, tmp = env
    mgr.create("ops", types=["md"])
    out = export_workspace(mgr, "ops", tmp / "ops.sparws")
    manifest = json.loads(zipfile.ZipFile(out).read("manifest.json"))
    assert manifest["paths"] == PATHS_NOTE and "absolute" in PATHS_NOTE
