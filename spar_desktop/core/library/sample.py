"""The bundled sample corpus, imported the same way by `spar sample`, `spar index` of the corpus
folder and the app's first run (ui/library/first_run.py calls this module).

The sample is COPIED into ``<data_dir>/sample_corpus`` before indexing: the install dir may be
read-only or shared, and the index must point at files the user owns. The corpus's own metadata
— ``_README.md``, ``_dates.json`` (relative path → ISO date: git does not keep modification
times) and ``_taxonomy/`` (a taxonomy and a DMS-style assignment CSV) — is not copied and never
indexed: the dates are restored on the copy (the date tags are built from them), the taxonomy is
imported and the assignments applied.
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
from spar_desktop.core.library.scan_report import ScanReport
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.resources_path import candidates
from spar_desktop.resources_path import resources_dir as find_resources

SAMPLE_DIR_NAME = "sample_corpus"
DATES_FILE = "_dates.json"
TAXONOMY_DIR = "_taxonomy"
README_FILE = "_README.md"


def resources_dir() -> Optional[Path]:
    """$SPAR_RESOURCES, else the checkout's ``resources/``, else the installed package data
    (``spar_desktop/_resources`` in a wheel or a bundle): spar_desktop/resources_path.py."""
    return find_resources()


def sample_corpus_dir() -> Optional[Path]:
    """The first resources folder whose sample corpus holds documents, not just its metadata."""
    for res in candidates():
        corpus = res / SAMPLE_DIR_NAME
        if corpus.is_dir() and any(not p.name.startswith("_") for p in corpus.iterdir()):
            return corpus
    return None


def is_sample_corpus(path: str | Path) -> bool:
    """A sample corpus folder (the bundled one, or a copy of it as shipped): it carries its dates
    and taxonomy beside the documents, which only the sample import knows how to use."""
    p = Path(path)
    return p.is_dir() and (p / DATES_FILE).is_file() and (p / TAXONOMY_DIR / "taxonomy.json").is_file() \
        and (p / README_FILE).is_file()


def default_target(library: Library) -> Path:
    if library.settings is None:
        raise ValueError("the sample corpus is copied into the data dir: the library needs settings")
    return library.settings.layout.sample_corpus


@dataclass(frozen=True)
class SampleImport:
    source: str
    target: str
    copied: int
    dated: int  # files whose modification date was restored from _dates.json
    reports: tuple[ScanReport, ...]
    taxonomy_tags: int
    assigned: int
    problems: tuple[str, ...]

    @property
    def indexed(self) -> int:
        return sum(r.seen for r in self.reports)

    @property
    def cancelled(self) -> bool:
        return any(r.cancelled for r in self.reports)

    def describe(self) -> str:
        return (f"Sample corpus ready: {self.indexed} files indexed, "
                f"{self.taxonomy_tags} taxonomy tags, {self.assigned} tag assignments")

    def lines(self) -> list[str]:
        """What the import did, for the CLI."""
        out = [f"copied {self.copied} files of the sample corpus from {self.source} to {self.target} "
               f"(its _README.md, _dates.json and _taxonomy are used, not indexed)",
               f"restored the document dates of {self.dated} files from {DATES_FILE}"]
        for r in self.reports:
            out.append(f"indexed {r.root}: {r.new} new, {r.changed} changed, {r.unchanged} unchanged, "
                       f"{r.missing} missing, {len(r.problems)} problems" + (" — CANCELLED" if r.cancelled else ""))
            out += [f"  ! {path}: {message}" for path, message in r.problems]
        out.append(f"imported the taxonomy ({self.taxonomy_tags} tags) and {self.assigned} tag assignments "
                   f"from {TAXONOMY_DIR}/")
        out += [f"  ! {p}" for p in self.problems]
        return out


def _copy_tree(source: Path, target: Path, progress: ProgressCallback, cancel: Optional[CancelToken]) -> int:
    files = [p for p in source.rglob("*")
             if p.is_file() and not p.relative_to(source).parts[0].startswith("_")]
    for n, src in enumerate(files, start=1):
        check(cancel)
        dst = target / src.relative_to(source)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
        progress(Progress(n, len(files), f"copying {src.name}"))
    return len(files)


def restore_dates(source: Path, target: Path) -> int:
    """Set each copied file's modification time to its document date; returns how many."""
    dates_file = source / DATES_FILE
    if not dates_file.is_file():
        return 0
    dates = json.loads(dates_file.read_text(encoding="utf-8"))
    done = 0
    for rel, iso in dates.items():
        path = target / rel
        if path.is_file():
            when = datetime.fromisoformat(iso)
            if when.hour == 0 and when.minute == 0:
                when = when.replace(hour=12)  # mid-day: no timezone can move it to another day
            ts = when.timestamp()
            os.utime(path, (ts, ts))
            done += 1
    return done


def import_sample(library: Library, source: Optional[Path] = None, target: Optional[Path] = None,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> SampleImport:
    """Copy → restore dates → index → import taxonomy → apply assignments. Re-running it is
    harmless: the copy is refreshed, its dates restored, and the scan finds nothing changed."""
    source = Path(source) if source is not None else sample_corpus_dir()
    if source is None or not source.is_dir():
        raise FileNotFoundError("the sample corpus is not installed (resources/sample_corpus)")
    target = Path(target) if target is not None else default_target(library)
    copied = _copy_tree(source, target, progress, cancel)
    dated = restore_dates(source, target)
    check(cancel)
    reports = tuple(Scanner(library).scan([str(target)], progress=progress, cancel=cancel))
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
    return SampleImport(str(source), str(target), copied, dated, reports, tags, assigned, tuple(problems))
