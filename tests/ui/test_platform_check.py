"""A fresh Linux without Qt's system libraries, or without a display, gets the exact fix."""

from __future__ import annotations

import os
import subprocess
import sys

from spar_desktop.ui.base.platform_check import install_hint, missing_libraries, platform_problem

LDD = """\
\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibweird.so.9 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)
"""


def test_missing_qt_libraries_become_one_apt_get_line():
    missing = missing_libraries(LDD)
    assert missing == ["libweird.so.9", "libxcb-cursor.so.0", "libxcb-icccm.so.4"]
    hint = install_hint(missing)
    assert "sudo apt-get install -y libxcb-cursor0 libxcb-icccm4" in hint
    assert "libweird.so.9" in hint  # no package known: still named


def test_no_display_is_said_plainly_and_offscreen_is_left_alone():
    assert "No display found" in platform_problem({"PATH": os.environ.get("PATH", "")})
    assert platform_problem({"QT_QPA_PLATFORM": "offscreen"}) is None


def test_the_app_exits_with_the_message_instead_of_a_qt_abort(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "-m", "spar_desktop.ui.app", "--data-dir", str(tmp_path / "d")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "No display found" in done.stderr and "xvfb-run" in done.stderr
