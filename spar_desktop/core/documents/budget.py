"""How much work one file may cost: the per-file extraction budget.

A share holds files no reader should load whole (a million-row sheet, a zip bomb, a mail with
fifty nested attachments). Readers stream and check the budget as they go, so a file over it
stops early with a message that names the limit and where to raise it, instead of exhausting
memory or holding a build for minutes. The limits are user settings (Settings ▸ Reading files).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from spar_desktop.core.documents.errors import ExtractionError

# About 1,000 pages of text: ~2,500 passages to embed, a minute or two of CPU. At 20 million a single
# hostile or export file cost ~25,000 passages and an hour of a shared machine.
DEFAULT_MAX_CHARS = 2_000_000

SETTINGS_HINT = "raise it in Settings ▸ Reading files"


class BudgetExceeded(ExtractionError):
    """A file needs more than its budget allows; the message says which limit and its value."""


@dataclass(frozen=True)
class ExtractionBudget:
    """Limits for reading one file (and, for containers, each of its members)."""

    max_chars: int = DEFAULT_MAX_CHARS  # text kept per document (more is cut with a warning)
    max_seconds: float = 120.0  # wall time of one file's extraction
    max_inflated_bytes: int = 512 * 1024 * 1024  # bytes a compressed member may inflate to
    max_compression_ratio: float = 200.0  # above this (and > 1 MiB inflated) a member is a zip bomb
    max_members: int = 5_000  # children listed per archive or mail
    max_depth: int = 3  # nesting of containers (zip in mail in zip ...)
    max_rows: int = 1_000_000  # spreadsheet rows read per file
    max_columns: int = 1_000  # spreadsheet columns kept per row
    max_pages: int = 10_000  # pages/slides/sheets read per file
    max_image_pixels: int = 100_000_000  # images larger than this are downscaled for OCR

    def clock(self) -> "BudgetClock":
        return BudgetClock(self)


@dataclass
class BudgetClock:
    """Wall time of one file's extraction; ``check()`` raises BudgetExceeded past the limit.

    Readers call ``check()`` per row, page or member: a cheap monotonic-clock read.
    """

    budget: ExtractionBudget
    started: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def check(self) -> None:
        if self.elapsed() > self.budget.max_seconds:
            raise BudgetExceeded(
                f"too slow to read: stopped after {self.budget.max_seconds:g} s "
                f"(the per-file time limit; {SETTINGS_HINT})")


def too_large(what: str, amount: str, limit: str) -> BudgetExceeded:
    """The message for a file over a size limit, e.g. too_large('text', '1.2 GB', '200 MB')."""
    return BudgetExceeded(f"too large: {amount} of {what}, limit {limit} ({SETTINGS_HINT})")


def human_bytes(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"
