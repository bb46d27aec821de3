#!/usr/bin/env python3
"""Draw the SPAR Desktop app icon (stacked folders + magnifier) into spar-desktop.png (256x256).

    QT_QPA_PLATFORM=offscreen python resources/icons/make_icon.py [--size 256] [--out PATH]

Uses only QtGui painting on a QImage, so it runs headless.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPointF, QRectF, Qt  # noqa: E402
from PySide6.QtGui import (  # noqa: E402
    QBrush, QColor, QGuiApplication, QImage, QLinearGradient, QPainter, QPainterPath, QPen,
)

NAVY = QColor("#0f2f57")
BLUE = QColor("#1f6fb8")
TEAL = QColor("#1bb5a6")


def folder_path(x: float, y: float, w: float, h: float, r: float) -> QPainterPath:
    """A folder silhouette: body with rounded corners plus a tab on the top-left."""
    tab_w, tab_h = w * 0.38, h * 0.16
    p = QPainterPath()
    p.addRoundedRect(QRectF(x, y + tab_h * 0.6, w, h - tab_h * 0.6), r, r)
    tab = QPainterPath()
    tab.moveTo(x + r, y)
    tab.lineTo(x + tab_w - tab_h * 0.2, y)
    tab.quadTo(x + tab_w, y, x + tab_w + tab_h * 0.5, y + tab_h)
    tab.lineTo(x, y + tab_h)
    tab.lineTo(x, y + r)
    tab.quadTo(x, y, x + r, y)
    return p.united(tab)


def draw(size: int = 256) -> QImage:
    img = QImage(size, size, QImage.Format_ARGB32_Premultiplied)
    img.fill(Qt.transparent)
    s = size / 256.0
    p = QPainter(img)
    p.setRenderHint(QPainter.Antialiasing)
    p.scale(s, s)

    # background tile: rounded square with a blue -> teal diagonal gradient
    g = QLinearGradient(QPointF(0, 0), QPointF(256, 256))
    g.setColorAt(0.0, BLUE)
    g.setColorAt(1.0, TEAL)
    p.setPen(Qt.NoPen)
    p.setBrush(QBrush(g))
    p.drawRoundedRect(QRectF(8, 8, 240, 240), 52, 52)

    # stacked folders (back two translucent, front one solid white)
    for i, alpha in ((2, 90), (1, 150)):
        p.setBrush(QColor(255, 255, 255, alpha))
        p.drawPath(folder_path(38 + i * 13, 66 - i * 13, 144, 106, 12))
    p.setBrush(QColor("#ffffff"))
    p.drawPath(folder_path(38, 78, 150, 112, 13))
    # document lines on the front folder
    p.setBrush(QColor(31, 111, 184, 70))
    for k, w in enumerate((96, 80, 60)):
        p.drawRoundedRect(QRectF(58, 118 + k * 18, w, 8), 4, 4)

    # magnifier: navy ring with a light lens, handle to the bottom-right
    cx, cy, r = 166, 158, 38
    p.setPen(QPen(NAVY, 22, Qt.SolidLine, Qt.RoundCap))
    p.drawLine(QPointF(cx + r * 0.72, cy + r * 0.72), QPointF(cx + r * 1.42, cy + r * 1.42))
    p.setPen(QPen(NAVY, 13))
    p.setBrush(QColor(224, 246, 243, 235))
    p.drawEllipse(QPointF(cx, cy), r, r)
    # lens highlight
    p.setPen(QPen(QColor(255, 255, 255, 230), 6, Qt.SolidLine, Qt.RoundCap))
    p.setBrush(Qt.NoBrush)
    p.drawArc(QRectF(cx - r + 12, cy - r + 12, 2 * r - 24, 2 * r - 24), 100 * 16, 70 * 16)
    p.end()
    return img


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "spar-desktop.png")
    args = ap.parse_args(argv)
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841
    if not draw(args.size).save(str(args.out), "PNG"):
        raise SystemExit(f"could not write {args.out}")
    print(f"wrote {args.out} ({args.size}x{args.size})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
