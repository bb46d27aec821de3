"""Before Qt starts: can its platform plugin load here? If not, say exactly what to install.

When Qt's xcb plugin cannot load (on a fresh Linux, `libxcb-cursor0` and friends are missing)
Qt aborts the process with a generic "Reinstalling the application may fix this problem". We
ask the dynamic linker first (`ldd` on the plugin) and turn each missing library into the Debian
package that ships it, so the user gets one `apt-get install` line instead of a dead end.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

# Library soname → Debian/Ubuntu package (Qt 6's xcb plugin and what it pulls in).
DEBIAN_PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1", "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0", "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0", "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-randr.so.0": "libxcb-randr0", "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xfixes.so.0": "libxcb-xfixes0", "libxcb-sync.so.1": "libxcb-sync1", "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-shm.so.0": "libxcb-shm0", "libxcb-render.so.0": "libxcb-render0", "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1", "libX11.so.6": "libx11-6", "libEGL.so.1": "libegl1", "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0", "libGLX.so.0": "libglx0", "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6", "libdbus-1.so.3": "libdbus-1-3", "libglib-2.0.so.0": "libglib2.0-0",
    "libSM.so.6": "libsm6", "libICE.so.6": "libice6", "libxcb-util.so.1": "libxcb-util1",
}
QT_XCB_PACKAGES = ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-image0", "libxcb-render-util0",
                   "libxkbcommon-x11-0", "libxcb-xinerama0", "libegl1", "libgl1", "libfontconfig1", "libdbus-1-3")
_NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found", re.MULTILINE)


def missing_libraries(ldd_output: str) -> list[str]:
    return sorted(set(_NOT_FOUND.findall(ldd_output)))


def install_hint(missing: list[str]) -> str:
    packages = sorted({DEBIAN_PACKAGES[m] for m in missing if m in DEBIAN_PACKAGES})
    unknown = [m for m in missing if m not in DEBIAN_PACKAGES]
    lines = [f"Qt cannot open a window: {len(missing)} system librar{'y is' if len(missing) == 1 else 'ies are'} "
             f"missing ({', '.join(missing)})."]
    if packages:
        lines.append("On Debian or Ubuntu install them with:\n    sudo apt-get install -y " + " ".join(packages))
    if unknown:
        lines.append("Install the packages that provide: " + ", ".join(unknown))
    return "\n".join(lines)


def _xcb_plugin() -> Optional[Path]:
    try:
        import PySide6
    except ImportError:
        return None
    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def platform_problem(env: Optional[dict] = None) -> Optional[str]:
    """A message for the user when Qt's window system cannot start here, else None."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux"):
        return None
    wanted = env.get("QT_QPA_PLATFORM", "")
    if wanted and not wanted.startswith("xcb"):
        return None  # offscreen, wayland, vnc...: the user chose; Qt reports its own problems
    if not wanted and env.get("WAYLAND_DISPLAY"):
        return None
    if not env.get("DISPLAY"):
        return ("No display found: SPAR Desktop needs a desktop session (X11 or Wayland).\n"
                "On a server, run it on a virtual screen (`xvfb-run spar-desktop`), or use the `spar` command line.")
    plugin, ldd = _xcb_plugin(), shutil.which("ldd")
    if plugin is None or ldd is None:
        return None
    try:
        out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    missing = missing_libraries(out)
    return install_hint(missing) if missing else None
