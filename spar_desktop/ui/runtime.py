"""Interpreter settings that keep the UI thread responsive while workers run Python.

Measured with benchmarks/ui_stall.py (10k-file scan + refresh): the long event-loop stalls
(100-300 ms) were full (generation-2) garbage collections. They run on whichever thread
triggers them, hold the GIL, and their cost grows with every long-lived object (Qt wrappers,
SQLAlchemy metadata, the scanner's per-run maps). Freezing the startup heap takes those
objects out of every later collection; a larger young-generation threshold lets the many
short-lived rows of a scan die before promotion, so full collections become rare and short.
(A shorter GIL switch interval was tried too and measured no better, so it is left alone.)
"""

from __future__ import annotations

import gc

GC_THRESHOLDS = (20_000, 20, 20)  # default (700, 10, 10)


def tune_for_ui() -> None:
    """Call once after start-up imports and the main window exist."""
    gc.set_threshold(*GC_THRESHOLDS)
    gc.collect()
    gc.freeze()  # start-up objects live for the whole session: never scan them again

