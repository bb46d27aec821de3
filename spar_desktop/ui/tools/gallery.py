"""Screenshots for the README (docs/screenshots/): the scripted smoke run on the sample corpus, with
the main views captured at 1280x800 and 1920x1080, light and dark.

    xvfb-run -a -s "-screen 0 1920x1080x24" env QT_QPA_PLATFORM=xcb \\
        python -m spar_desktop.ui.tools.gallery --out docs/screenshots

``--only graph-dark,library-light`` writes only those views and themes (the flow still runs whole).
Files are named ``<view>-<width>-<theme>.png`` (``workspace-1280-dark.png``). Each shot switches
the theme and the window size in place and waits for the repaint, so one run walks the flow once.
Dialogs (settings) are drawn over the window, as a user sees them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Optional

from PySide6.QtCore import QPoint
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication, QWidget

SIZES = ((1280, 800), (1920, 1080))
THEMES = ("light", "dark")
OUT: list[Path] = []  # where the shots go (set by main)
ONLY: set[str] = set()  # "<view>-<theme>" to write (--only); empty: all


async def shoot(ctx, view: str, dialog: Optional[QWidget] = None) -> None:
    from spar_desktop.ui.base.style import apply_theme

    app, w = QApplication.instance(), ctx.window
    for theme in THEMES:
        apply_theme(app, theme == "dark")
        for width, height in SIZES:
            for _ in range(2):  # a dock shown by a view switch takes its width on the second pass
                w.resize(width, height)
                await asyncio.sleep(0.25)
            image = w.grab()
            if dialog is not None:
                dialog.adjustSize()
                await asyncio.sleep(0.2)
                painter = QPainter(image)
                shot = dialog.grab()
                painter.drawPixmap(QPoint((width - shot.width()) // 2, (height - shot.height()) // 3), shot)
                painter.end()
            if ONLY and f"{view}-{theme}" not in ONLY:
                continue  # walked all the same: the docks' widths depend on the sizes before
            target = OUT[0] / f"{view}-{width}-{theme}.png"
            if not image.save(str(target)):
                raise RuntimeError(f"could not write {target}")
            ctx.screenshots.append(target.name)
    apply_theme(app, False)


def gallery_steps():
    """The smoke run's steps, with shots after the ones that show a view worth seeing."""
    from spar_desktop.ui.tools import smoke

    def after(step, view: str):
        async def run(ctx) -> None:
            await step.run(ctx)
            if view == "library":
                ctx.window.views.show_library()
            if view == "graph":  # the smoke run expanded a node; the picture shows the plain selection
                graph = ctx.window.relations.view
                selected = graph.selected
                graph.set_payload(graph.payload)
                if selected is not None:
                    graph.select_row(selected)
            await shoot(ctx, view)
        return smoke.SmokeStep(step.name, run, None, step.timeout + 60)

    async def settings(ctx) -> None:
        from spar_desktop.ui.base.settings_dialog import SettingsDialog

        dialog = SettingsDialog(ctx.window.settings, ctx.window)
        dialog.show()
        await asyncio.sleep(0.3)
        await shoot(ctx, "settings", dialog)
        dialog.reject()

    async def overview(ctx) -> None:
        ctx.window.overview_action.trigger()
        await ctx.settle()
        await shoot(ctx, "overview")
        ctx.window.views.show_library()

    shots = {"start": "first-run", "index-sample": "library", "workspace-search": "workspace", "chat": "chat",
             "relations": "graph"}
    steps = []
    for step in smoke.STEPS:
        steps.append(after(step, shots[step.name]) if step.name in shots else
                     smoke.SmokeStep(step.name, step.run, None, step.timeout))
        if step.name == "index-sample":
            steps.append(smoke.SmokeStep("overview-shots", overview, None, 120))
            steps.append(smoke.SmokeStep("settings-shots", settings, None, 120))
    return steps


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/screenshots", help="folder for the PNGs")
    parser.add_argument("--only", default="", help="comma-separated <view>-<theme> to write, e.g. graph-dark")
    args = parser.parse_args(argv)
    ONLY.clear()
    ONLY.update(x.strip() for x in args.only.split(",") if x.strip())
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    OUT[:] = [out]
    from spar_desktop.ui.app import main as app_main
    from spar_desktop.ui.tools import smoke

    smoke.STEPS[:] = gallery_steps()
    with tempfile.TemporaryDirectory(prefix="spar-gallery-") as report:  # the smoke report and failure shots
        code = app_main(["--smoke", report])
        if code:
            failed = Path(report) / "smoke-report.json"
            print(failed.read_text() if failed.exists() else "no smoke report", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
