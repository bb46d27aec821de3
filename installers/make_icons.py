"""App icons for the bundles, from resources/icons/spar-desktop.png (build time only).

    python installers/make_icons.py [--out build/icons]

Writes spar-desktop.ico (Windows: 16-256 px), spar-desktop.icns (macOS: 16-1024 px) and
hicolor PNGs (Linux menu: 48, 64, 128, 256, 512 px) with Pillow. The committed PNG is 256 x 256;
the larger sizes are drawn again by resources/icons/make_icon.py at 1024 px when PySide6 is
importable (it paints vectors offscreen), else scaled up from the PNG.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "resources" / "icons" / "spar-desktop.png"
DRAW = ROOT / "resources" / "icons" / "make_icon.py"
ICO_SIZES = [16, 24, 32, 48, 64, 128, 256]
ICNS_SIZES = [16, 32, 64, 128, 256, 512, 1024]
HICOLOR_SIZES = [48, 64, 128, 256, 512]


def master(out: Path) -> Path:
    """A 1024 px PNG: redrawn from the vector painter when possible, else the 256 px source."""
    big = out / "spar-desktop-1024.png"
    if DRAW.is_file():
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
        done = subprocess.run([sys.executable, str(DRAW), "--size", "1024", "--out", str(big)], env=env,
                              capture_output=True, text=True, timeout=120)
        if done.returncode == 0 and big.is_file():
            return big
        print(f"make_icon.py could not draw 1024 px ({done.stderr.strip()[-200:]}); scaling the PNG",
              file=sys.stderr)
    return SOURCE


def make(out: Path) -> dict[str, Path]:
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    src = Image.open(master(out)).convert("RGBA")
    if src.size[0] < 1024:
        src = src.resize((1024, 1024), Image.Resampling.LANCZOS)
    written = {}
    ico = out / "spar-desktop.ico"
    src.save(ico, format="ICO", sizes=[(s, s) for s in ICO_SIZES])
    written["ico"] = ico
    icns = out / "spar-desktop.icns"
    src.save(icns, format="ICNS", sizes=[(s, s) for s in ICNS_SIZES])
    written["icns"] = icns
    for s in HICOLOR_SIZES:
        p = out / "hicolor" / f"{s}x{s}" / "apps" / "spar-desktop.png"
        p.parent.mkdir(parents=True, exist_ok=True)
        # the committed 256 px PNG is used as is at its own size
        (Image.open(SOURCE) if s == 256 else src.resize((s, s), Image.Resampling.LANCZOS)).save(p, format="PNG")
        written[f"png{s}"] = p
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "icons")
    args = ap.parse_args(argv)
    for kind, path in make(args.out).items():
        print(f"{kind}: {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
