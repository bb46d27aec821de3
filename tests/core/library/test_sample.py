"""The bundled sample corpus imported by the core (issue 14.11): `spar sample`, `spar index` of the
corpus folder and the app's first-run import give the same index — files, dates, tags — and the
corpus's own metadata (_README.md, _dates.json, _taxonomy) is never indexed."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from spar_desktop.cli import main
from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileTag, Tag
from spar_desktop.core.library.sample import SAMPLE_DIR_NAME, sample_corpus_dir

SAMPLE = sample_corpus_dir()
# Child documents of the corpus's zip and mail (virtual paths: container!/member), listed by the scan.
AUDIT_ZIP = "Archive/Legacy/Audit-Papers-2019.zip!/Audit-Papers-2019/"
CHILDREN = {
    AUDIT_ZIP + "Height-Safety-Audit-Brackenridge-2019.pdf": "2019-06-28",
    AUDIT_ZIP + "Management-Response-2019-07-05.md": "2019-07-05",
    AUDIT_ZIP + "Working-Notes/Auditor-Site-Notes-2019-06-12.txt": "2019-06-12",
    "Operations/Incident-Reports/2024/RE-Near-miss-IR-2024-004-excavator-near-33kV-cable.eml!/"
    "IR-2024-004-Initial-Report.docx": "2024-09-04",
}
pytestmark = pytest.mark.skipif(SAMPLE is None, reason="the sample corpus (resources/sample_corpus) is not built")


def index_view(data: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """rel path → (modified day, sorted tag keys) of every file in the index at ``data``."""
    lib = Library.open(load_settings(data))
    try:
        with lib.session() as s:
            tags: dict[int, list[str]] = {}
            for fid, key in s.execute(select(FileTag.file_id, Tag.key).join(Tag, Tag.id == FileTag.tag_id)):
                tags.setdefault(fid, []).append(key)
            return {f.rel_path: (f.modified_at.date().isoformat() if f.modified_at else "",
                                 tuple(sorted(tags.get(f.id, ()))))
                    for f in s.scalars(select(File))}
    finally:
        lib.close()


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_spar_sample_and_spar_index_of_the_corpus_give_the_documented_index(tmp_path, capsys):
    code, out, err = spar(capsys, tmp_path / "a", "sample")
    assert code == 0, err
    copy = tmp_path / "a" / SAMPLE_DIR_NAME
    assert str(copy) in out and "dates" in out and "taxonomy" in out
    sampled = index_view(tmp_path / "a")
    assert not any(Path(rel).name.startswith("_") for rel in sampled)  # _README.md, _dates.json, _taxonomy/*
    dates = {rel: iso for rel, iso in json.loads((SAMPLE / "_dates.json").read_text(encoding="utf-8")).items()
             if not rel.startswith("_")}
    assert set(dates) == {rel for rel in sampled if "!/" not in rel}
    for rel, iso in dates.items():
        assert sampled[rel][0] == datetime.fromisoformat(iso).date().isoformat(), rel
    # zip members are dated by their zip entry, the mail's attachment by the mail
    assert {rel: day for rel, (day, _) in sampled.items() if "!/" in rel} == CHILDREN
    assert all(day < "2025" for day, _ in sampled.values())  # nothing dated at checkout time
    assert any(not key.startswith("date:") and "/" not in key for _, keys in sampled.values() for key in keys)  # taxonomy

    # `spar index` of the bundled corpus folder is the same import (not the folder as it is).
    code, out, err = spar(capsys, tmp_path / "b", "index", str(SAMPLE), "--quiet")
    assert code == 0, err
    assert "sample corpus" in out
    assert index_view(tmp_path / "b") == sampled
    # Running it again changes nothing.
    assert spar(capsys, tmp_path / "a", "sample")[0] == 0
    assert index_view(tmp_path / "a") == sampled
