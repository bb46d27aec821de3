"""First run: offer the bundled sample corpus when the index is empty, and import it.

The import itself — copy into ``<data_dir>/sample_corpus``, restore the document dates from
``_dates.json``, index, import ``_taxonomy/`` — is core/library/sample.py, the same code as
`spar sample` (and `spar index` of the corpus folder), so the app and the CLI build the same index.
This module only adapts its result to the app's scan summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spar_desktop.core.changes import Changes
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.overview import ScanSummary
from spar_desktop.core.library.sample import (  # noqa: F401  (re-exported for the app)
    DATES_FILE, SAMPLE_DIR_NAME, TAXONOMY_DIR, import_sample, resources_dir, sample_corpus_dir,
)
from spar_desktop.core.progress import CancelToken, ProgressCallback


@dataclass(frozen=True)
class SampleImport:
    target: str
    copied: int
    scan: ScanSummary
    taxonomy_tags: int
    assigned: int
    problems: tuple[str, ...]

    @property
    def changes(self) -> Changes:
        return Changes(files=True, tags=True)  # files indexed, taxonomy and date tags

    def describe(self) -> str:
        return (f"Sample corpus ready: {self.scan.new + self.scan.changed + self.scan.unchanged} files indexed, "
                f"{self.taxonomy_tags} taxonomy tags, {self.assigned} tag assignments")


def import_sample_corpus(library: Library, source: Path, target: Path,
                         progress: ProgressCallback, cancel: CancelToken) -> SampleImport:
    """Copy → restore dates → index → import taxonomy → apply assignments (core/library/sample.py)."""
    done = import_sample(library, source, target, progress, cancel)
    return SampleImport(done.target, done.copied, ScanSummary.from_reports(done.reports, cancel.cancelled),
                        done.taxonomy_tags, done.assigned, done.problems)
