"""Work-around for a reference-counting defect of the Qt binding, applied on import of spar_desktop.ui.

Measured here: with PySide6 6.12.0 (cp310-abi3 wheel) on Python 3.11, every void Qt method
(``label.setText``, ``model.beginResetModel``, ``painter.drawRect`` ...) returns ``None``
without taking a reference for the caller, and every ``Signal.emit()`` does the same with
``True``. The binding behaves as if those singletons were immortal, as they are from Python
3.12 on; on 3.11 their counts drain by one per call until CPython frees them and aborts
("Fatal Python error: none_dealloc" / "bool_dealloc") — after some tens of thousands of UI
calls, or at exit. PySide6 6.11.3 does not have the defect.

When the defect is detected, this module makes None, True and False immortal the way Python
3.12 does: it adds 2**30 to their reference counts once, so no realistic session can drain
them. Nothing happens on an unaffected binding or on Python 3.12+.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Callable

from PySide6.QtCore import QObject, Signal

CUSHION = 1 << 30
_PROBES = 64


class _Probe(QObject):
    ping = Signal()


def _drained(obj: object, call: Callable[[], object]) -> bool:
    before = sys.getrefcount(obj)
    for _ in range(_PROBES):
        call()
    # Other threads may add or drop a few references meanwhile; the defect loses exactly one per call.
    return before - sys.getrefcount(obj) >= _PROBES // 2


def _make_immortal(obj: object) -> None:
    if hasattr(sys, "gettotalrefcount"):  # debug build: a different object layout; go the slow way
        incref = ctypes.pythonapi.Py_IncRef
        incref.argtypes, incref.restype = [ctypes.py_object], None
        for _ in range(1 << 20):
            incref(obj)
        return
    # ob_refcnt is the first field of every object in a release build of CPython.
    ctypes.c_ssize_t.from_address(id(obj)).value += CUSHION


def detect_and_fix() -> bool:
    """Returns True when the defect was found (and neutralised)."""
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False  # None/True/False are immortal there already
    probe = _Probe()
    affected = _drained(None, lambda: probe.setObjectName("probe")) or _drained(True, probe.ping.emit)
    if affected:
        for obj in (None, True, False):
            _make_immortal(obj)
    return affected


def describe() -> str:
    """One line for the log (the app writes it once logging is set up)."""
    import PySide6

    if not SINGLETONS_PATCHED:
        return f"PySide6 {PySide6.__version__}: no reference-count work-around needed"
    return (f"PySide6 {PySide6.__version__} drops references to None/True on Python "
            f"{sys.version_info[0]}.{sys.version_info[1]}: made them immortal (PySide6 < 6.12 or "
            "Python >= 3.12 avoids the need)")


SINGLETONS_PATCHED = detect_and_fix()
