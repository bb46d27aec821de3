"""The binding's reference-count defect (see spar_desktop/ui/base/qtcompat.py) cannot abort the app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# 300k void calls and emits: far more than None's and True's natural reference counts.
SCRIPT = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
import spar_desktop.ui  # applies the work-around
from spar_desktop.ui.base import qtcompat
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication, QLabel
app = QApplication([])
class S(QObject):
    sig = Signal(object)
s = S(); s.sig.connect(lambda v: None); label = QLabel()
for i in range(150_000):
    label.setText("x")
    s.sig.emit(i)
print("survived", qtcompat.SINGLETONS_PATCHED)
"""


def test_many_void_calls_and_emits_do_not_abort_the_interpreter():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("survived")
