"""One reading of a task's Progress for every widget that shows it (task list, workspace list and
progress bar, Relations status), so the bar, the percentage and the text always agree.

Core operations report ``Progress(done, total, message)``, and some messages carry counts of
their own: a workspace build reports documents in ``done/total`` while its message says
"embedding chunks 256/1082", so the list showed "building 3%" beside "embedding chunks 256/1082".
When the message names a count, that count is what the user reads, so it is the one shown
everywhere; otherwise ``done/total`` is, and the text says those numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from spar_desktop.core.progress import Progress

COUNT = re.compile(r"(\d[\d,]*)\s*/\s*(\d[\d,]*)")


@dataclass(frozen=True)
class ShownProgress:
    fraction: Optional[float]  # None: no total known (a busy indicator)
    text: str  # the message, with the numbers the fraction is made of

    @property
    def percent(self) -> Optional[int]:
        return None if self.fraction is None else int(self.fraction * 100)

    def with_percent(self) -> str:
        """'embedding chunks 256/1082 — 23%' (the text alone while no total is known)."""
        if self.percent is None:
            return self.text
        return f"{self.text} — {self.percent}%" if self.text else f"{self.percent}%"


def shown(p: Optional[Progress]) -> ShownProgress:
    if p is None:
        return ShownProgress(None, "")
    message = p.message or ""
    counts = COUNT.findall(message)
    if counts:
        done, total = (int(x.replace(",", "")) for x in counts[-1])
        if total > 0:
            return ShownProgress(min(1.0, done / total), message)
    if p.total:
        numbers = f"{p.done:,}/{p.total:,}"
        return ShownProgress(p.fraction, f"{message} ({numbers})" if message else numbers)
    return ShownProgress(None, message)
