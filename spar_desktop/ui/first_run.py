"""First run: offer the bundled sample corpus when the index is empty, and import it.

The sample is COPIED into ``<data_dir>/sample_corpus`` before indexing: the install dir may be
read-only or shared, and the index must point at files the user owns. Its ``_dates.json``
(relative path → ISO date) restores realistic modification dates on the copy, which the
date tags are built from; ``_taxonomy/`` holds the taxonomy and a DMS-style assignment CSV.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Optional

from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check
from spar_desktop.ui.library_ops import ScanSummary, scan_paths

SAMPLE_DIR_NAME = "sample_corpus"
DATES_FILE = "_dates.json"
TAXONOMY_DIR = "_taxonomy"


def resources_dir() -> Optional[Path]:
    """``resources/`` of a source checkout or an installed package, else $SPAR_RESOURCES."""
    import spar_desktop

    candidates = [Path(spar_desktop.__file__).resolve().parent.parent / "resources"]
    if os.environ.get("SPAR_RESOURCES"):
        candidates.append(Path(os.environ["SPAR_RESOURCES"]).expanduser())
    for c in candidates:
        if c.is_dir():
            return c
    return None


def sample_corpus_dir() -> Optional[Path]:
    res = resources_dir()
    if res is None:
        return None
    corpus = res / SAMPLE_DIR_NAME
    # The corpus must hold documents, not just its metadata files.
    if corpus.is_dir() and any(not p.name.startswith("_") for p in corpus.iterdir()):
        return corpus
    return None


@dataclass(frozen=True)
class SampleImport:
    target: str
    copied: int
    scan: ScanSummary
    taxonomy_tags: int
    assigned: int
    problems: tuple[str, ...]

    def describe(self) -> str:
        return (f"Sample corpus ready: {self.scan.new + self.scan.changed + self.scan.unchanged} files indexed, "
                f"{self.taxonomy_tags} taxonomy tags, {self.assigned} tag assignments")


def _copy_tree(source: Path, target: Path, progress: ProgressCallback, cancel: CancelToken) -> int:
    files = [p for p in source.rglob("*")
             if p.is_file() and not p.relative_to(source).parts[0].startswith("_")]
    for n, src in enumerate(files, start=1):
        check(cancel)
        dst = target / src.relative_to(source)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        progress(Progress(n, len(files), f"copying {src.name}"))
    return len(files)


def _restore_dates(source: Path, target: Path) -> None:
    dates_file = source / DATES_FILE
    if not dates_file.is_file():
        return
    dates = json.loads(dates_file.read_text(encoding="utf-8"))
    for rel, iso in dates.items():
        path = target / rel
        if path.is_file():
            when = datetime.fromisoformat(iso)
            if when.hour == 0 and when.minute == 0:
                when = when.replace(hour=12)  # mid-day: no timezone can move it to another day
            ts = when.timestamp()
            os.utime(path, (ts, ts))


def import_sample_corpus(library: Library, source: Path, target: Path,
                         progress: ProgressCallback, cancel: CancelToken) -> SampleImport:
    """Copy → restore dates → index → import taxonomy → apply assignments."""
    from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy

    copied = _copy_tree(source, target, progress, cancel)
    _restore_dates(source, target)
    check(cancel)
    scan = scan_paths(library, [str(target)], progress, cancel)
    check(cancel)
    problems: list[str] = []
    tags = assigned = 0
    taxonomy = source / TAXONOMY_DIR / "taxonomy.json"
    assignments = source / TAXONOMY_DIR / "assignments.csv"
    progress(Progress(0, None, "importing the taxonomy"))
    with library.session() as s:
        if taxonomy.is_file():
            report = import_taxonomy(s, taxonomy)
            tags = report.tags_created + report.tags_existing
            problems += report.problems
        if assignments.is_file():
            a = assign_from_csv(s, assignments, base_dir=str(target))
            assigned = a.assigned
            problems += a.problems + [f"not in the index: {p}" for p in a.unknown_paths]
    return SampleImport(str(target), copied, scan, tags, assigned, tuple(problems))
