"""Helpers shared by CLI commands: the user-facing error, date arguments, settings from flags,
opening the library, stderr progress."""

from __future__ import annotations

import argparse
import calendar
import json
import re
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any, Callable, Optional

from spar_desktop.commands.terminal import printable
from spar_desktop.core.config import Settings, load_settings
from spar_desktop.core.progress import Progress


class CommandError(Exception):
    """A user-facing failure: printed as 'spar: error: ...' with a non-zero exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def parse_day(text: str, end: bool = False) -> date:
    """YYYY, YYYY-MM or YYYY-MM-DD; with end=True a partial date means its last day."""
    parts = text.strip().split("-")
    try:
        nums = [int(p) for p in parts]
        if len(nums) == 1:
            return date(nums[0], 12, 31) if end else date(nums[0], 1, 1)
        if len(nums) == 2:
            last = calendar.monthrange(nums[0], nums[1])[1]
            return date(nums[0], nums[1], last if end else 1)
        if len(nums) == 3:
            return date(*nums)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"'{text}' is not a date (YYYY, YYYY-MM or YYYY-MM-DD)")


def settings_from_args(args: argparse.Namespace) -> Settings:
    return load_settings(getattr(args, "data_dir", None), database_url=getattr(args, "database_url", None))


def open_library(args: argparse.Namespace):
    """Open (creating if needed) the metadata index named by the global flags."""
    from spar_desktop.core.library.database import Library

    return Library.open(settings_from_args(args))


_COUNT = re.compile(r"\d\s*/\s*\d")


class StderrProgress:
    """Progress callback that redraws one status line on stderr, at most ~10 times a second."""

    def __init__(self, label: str, stream=None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self._last = 0.0
        self._tty = self.stream.isatty()

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        if now - self._last < 0.1 and (p.total is None or p.done < p.total):
            return
        self._last = now
        count = f"{p.done}/{p.total}" if p.total else f"{p.done}"
        # A message that says its own count ("running queries 1,240/20,430, about 12 min left") is shown alone.
        text = p.message if _COUNT.search(p.message or "") else f"{count} {p.message}"
        line = printable(f"{self.label}: {text}".rstrip())  # the message may name a file
        if self._tty:
            self.stream.write("\r\x1b[2K" + line[:150])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self._tty:
            self.stream.write("\n")
            self.stream.flush()


def emit_report(json_target: Optional[str], report: dict, show: Callable[[dict], Any]) -> int:
    """A report as `spar eval` gives it: JSON on stdout for ``--json -``; otherwise ``show``'s
    table, and the JSON also written to ``--json FILE`` when one is given."""
    text = json.dumps(report, indent=2, default=str)
    if json_target == "-":
        print(text)
        return 0
    show(report)
    if json_target:
        out = Path(json_target)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        print(f"report written to {out}")
    return 0
