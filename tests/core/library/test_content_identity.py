"""Content identity the user can trust: a file's hash names its content, never another file's,
and a link never brings text from outside an indexed folder into the index."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from sqlalchemy import update

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus
from spar_desktop.core.library.probe import SAMPLE_ABOVE
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.models import WorkspaceFileState

from .test_scanner import all_files

BIG = SAMPLE_ABOVE + 8 * 1024 * 1024  # 40 MB: above the size where unreadable formats are sampled


def big_text(path: Path, middle_word: bytes) -> None:
    """A large text file whose only distinctive bytes sit at a quarter of its length, away from
    the start, middle and end that a sampled fingerprint would read."""
    line = b"routine log line with nothing special in it\n"
    body = bytearray(line * (BIG // len(line) + 1))[:BIG]
    at = BIG // 4
    body[at:at + len(middle_word)] = middle_word
    path.write_bytes(bytes(body))


def test_two_large_files_differing_in_the_middle_are_two_documents(library, scanner, share):
    big_text(share / "a.log", b"AARDVARK")
    big_text(share / "b.log", b"ZEBRAFISH")
    scanner.scan([str(share)])
    files = all_files(library)
    a, b = files["a.log"], files["b.log"]
    assert a.size == b.size == BIG
    assert a.content_hash.startswith("b2:") and b.content_hash.startswith("b2:")  # full-content hash
    assert a.content_hash != b.content_hash


def test_a_same_size_edit_of_a_large_file_changes_its_identity(library, scanner, share):
    path = share / "big.log"
    big_text(path, b"AARDVARK")
    scanner.scan([str(share)])
    before = all_files(library)["big.log"]
    stat = path.stat()
    big_text(path, b"PLATYPUS")  # same size, different text in the middle
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    [report] = scanner.scan([str(share)])
    after = all_files(library)["big.log"]
    assert report.changed == 1
    assert after.content_hash != before.content_hash
    assert after.content_version == before.content_version + 1


def test_an_index_with_old_sampled_fingerprints_is_rehashed_on_the_next_scan(library, scanner, share):
    (share / "notes.txt").write_text("meeting notes", encoding="utf-8")
    scanner.scan([str(share)])
    with library.session() as s:  # as an index written by the version that sampled large files
        s.execute(update(File).values(content_hash="b2s:0123"))
    [report] = scanner.scan([str(share)])
    assert report.changed == 1
    assert all_files(library)["notes.txt"].content_hash.startswith("b2:")


def test_large_media_keeps_a_cheap_fingerprint(library, scanner, share):
    with open(share / "video.bin", "wb") as fh:
        fh.truncate(BIG)  # never read as text: sampled, so a share of videos scans in seconds
    scanner.scan([str(share)])
    assert all_files(library)["video.bin"].content_hash.startswith("b2s:")


def test_file_links_are_followed_only_inside_the_root(library, scanner, share, tmp_path):
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "passwords.txt").write_text("root:secret-token", encoding="utf-8")
    (share / "real.txt").write_text("inside text", encoding="utf-8")
    os.symlink(outside / "passwords.txt", share / "leak.txt")
    os.symlink(share / "real.txt", share / "alias.txt")
    [report] = scanner.scan([str(share)])
    files = all_files(library)
    leak = files["leak.txt"]
    assert leak.status == FileStatus.UNSUPPORTED and leak.content_hash is None
    assert "outside the indexed folder" in leak.error and "not followed" in leak.error
    assert any(os.path.basename(p) == "leak.txt" and "outside" in m for p, m in report.problems)
    assert files["alias.txt"].status == FileStatus.OK
    assert files["alias.txt"].content_hash == files["real.txt"].content_hash
    [again] = scanner.scan([str(share)])
    assert again.unchanged == 3 and again.changed == 0  # the refusal is stable, not re-reported as a change


def test_a_workspace_never_embeds_text_from_outside_its_roots(tmp_path):
    share, outside = tmp_path / "share", tmp_path / "private"
    share.mkdir()
    outside.mkdir()
    (share / "turbine.md").write_text("Turbine inspection found blade erosion.", encoding="utf-8")
    (outside / "secret.md").write_text("The vault code is quixotic-marmalade.", encoding="utf-8")
    (outside / "later.md").write_text("Later secret: zanzibar-harmonica.", encoding="utf-8")
    (share / "inside-target.md").write_text("An inside note about gearboxes.", encoding="utf-8")
    os.symlink(outside / "secret.md", share / "leak.md")
    os.symlink(share / "inside-target.md", share / "moved.md")
    settings = replace(load_settings(tmp_path / "data"), chroma_process=False)
    lib = Library.open(settings)
    try:
        Scanner(lib).scan([str(share)])
        # A link that pointed inside when scanned and was retargeted outside before the build.
        target_stat = (share / "inside-target.md").stat()
        (share / "moved.md").unlink()
        os.symlink(outside / "later.md", share / "moved.md")
        os.utime(outside / "later.md", ns=(target_stat.st_atime_ns, target_stat.st_mtime_ns))
        mgr = Workspaces(lib, Engine(settings, get_encoder("cpu")))
        try:
            mgr.create("all", types=["md"])
            report = mgr.build("all")
            states = {Path(p).name: (st, msg) for p, st, msg in report.problems}
            assert states["moved.md"][0] == WorkspaceFileState.FAILED and "outside" in states["moved.md"][1]
            assert "leak.md" in states
            texts = " ".join(h.text for h in mgr.search("all", "vault code secret", k=10).hits)
            texts += " ".join(h.text for h in mgr.search("all", "zanzibar harmonica", k=10).hits)
            assert "quixotic" not in texts and "zanzibar" not in texts
            assert "blade erosion" in " ".join(h.text for h in mgr.search("all", "turbine blade", k=3).hits)
        finally:
            mgr.engine.close()
    finally:
        lib.close()
