"""What a build reports: counts, what changed since the last build, problems and notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from spar_desktop.core.changes import Changes


@dataclass
class WorkspaceBuildReport:
    name: str
    admitted: int = 0
    ready: int = 0
    chunks: int = 0
    embedded_chunks: int = 0  # newly embedded in this build (0 when everything came from the cache)
    read_documents: int = 0  # documents read from disk (not in the cache: new or changed content)
    # What the index had changed since the last build (freshness.py): files updated, added, dropped.
    changed_files: int = 0
    new_files: int = 0
    removed_files: int = 0
    carried_keys: int = 0  # learned keys (ERM) that followed a chunk whose text survived an edit
    dropped_keys: int = 0  # learned keys of document versions no workspace holds any more
    reused_documents: int = 0
    added_vectors: int = 0
    removed_vectors: int = 0
    rewritten_vectors: int = 0  # kept their id with a new vector (an edited file's changed passages)
    duplicates: int = 0  # admitted files whose content another admitted file already has
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (path, state, message)
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False
    seconds: float = 0.0
    searchable_seconds: Optional[float] = None  # from the start to keyword search answering (live_build.py)
    chunking: str = ""  # how the collection is cut and scored, chosen from its lengths (keyword_units.py)

    @property
    def changes(self) -> Changes:
        return Changes(workspaces=True)  # however it ended: the row's status, counts and files

    def describe(self) -> str:
        """One line for a status bar."""
        if self.cancelled:
            return f"Build of '{self.name}' stopped; finished files are kept and the next build resumes"
        text = (f"'{self.name}' is ready: {self.ready} of {self.admitted} files, {self.chunks:,} passages "
                f"({self.embedded_chunks:,} newly embedded) in {self.seconds:.1f} s")
        caught_up = ", ".join(f"{n} {what}" for n, what in ((self.changed_files, "changed"),
                                                            (self.new_files, "new"), (self.removed_files, "removed")) if n)
        if caught_up:
            text += f"; updated: {caught_up}"
        if self.problems:
            text += f"; {len(self.problems)} file{'s' if len(self.problems) != 1 else ''} could not be used"
        return text

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["problems"] = [{"path": p, "state": st, "message": m} for p, st, m in self.problems]
        return d
