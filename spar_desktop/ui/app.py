"""`spar-desktop`: the GUI entry point.

QApplication on a qasync event loop (async I/O such as streaming chat shares the Qt loop),
one instance per data dir (QLockFile), a log file in ``<data_dir>/logs``, a crash dialog for
uncaught exceptions, and ``--smoke OUTDIR`` for a scripted offscreen run with screenshots.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import logging.handlers
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Callable, Optional, Sequence

from spar_desktop.core.data_layout import DataLayout

log = logging.getLogger("spar_desktop.ui")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="spar-desktop", description="SPAR Desktop")
    p.add_argument("--data-dir", help="data folder (default: SPAR_DATA_DIR or the platform's user data dir)")
    p.add_argument("--smoke", metavar="OUTDIR",
                   help="run the scripted smoke test offscreen on the sample corpus, save screenshots in OUTDIR")
    p.add_argument("--keep-data", action="store_true", help="with --smoke: keep the temporary data dir")
    p.add_argument("paths", nargs="*", help="folders or files to index (a folder dropped on the launcher)")
    args, _qt_args = p.parse_known_args(list(argv))  # leave Qt's own options (-platform ...) to Qt
    # Only what exists is a path to index: the value of a Qt option ("-platform xcb") is not.
    args.paths = [os.path.abspath(x) for x in args.paths if os.path.exists(x)]
    return args


def setup_logging(data_dir: Path) -> Path:
    log_dir = DataLayout(data_dir).logs
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / "spar-desktop.log"
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=5_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def install_excepthook(log_path: Path, interactive: bool, crashes: list[str]) -> Callable:
    """Uncaught exceptions (in Qt slots too) are logged; people see a dialog with the log path.

    Offscreen (--smoke, CI) there is no dialog: the error is recorded and the exit code says it.
    """
    showing = [False]

    def hook(exc_type, exc, tb) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        text = "".join(traceback.format_exception(exc_type, exc, tb))
        log.critical("uncaught exception\n%s", text)
        crashes.append(text)
        if not interactive:
            sys.stderr.write(text)
            return
        if showing[0]:
            return  # one dialog at a time: a failing paint would otherwise stack hundreds
        from PySide6.QtWidgets import QMessageBox

        showing[0] = True
        try:
            box = QMessageBox(QMessageBox.Icon.Critical, "SPAR Desktop — unexpected error",
                              f"Something went wrong: {exc}\n\nSPAR Desktop keeps running, but you may want to "
                              f"restart it. The details are in the log file:\n{log_path}")
            box.setDetailedText(text)
            box.exec()
        finally:
            showing[0] = False

    sys.excepthook = hook
    return hook


def _resolve_data_dir(args: argparse.Namespace) -> tuple[Optional[str], Optional[str]]:
    """(data dir to use or None for the default, temp dir we created and should remove)."""
    if args.data_dir:
        return args.data_dir, None
    if args.smoke:
        tmp = tempfile.mkdtemp(prefix="spar-smoke-")
        return tmp, (None if args.keep_data else tmp)
    return None, None


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.smoke:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # tools/screenshots.py sets xcb instead
    data_dir, temp_dir = _resolve_data_dir(args)
    try:
        return _run(args, data_dir)
    finally:
        if temp_dir:
            shutil.rmtree(temp_dir, ignore_errors=True)


def _run(args: argparse.Namespace, data_dir: Optional[str]) -> int:
    from spar_desktop.ui.base.platform_check import platform_problem

    problem = platform_problem()
    if problem:  # Qt would abort with "reinstalling the application may fix this problem"
        print(problem, file=sys.stderr)
        return 2
    import qasync
    from PySide6.QtCore import QLockFile
    from PySide6.QtWidgets import QApplication, QMessageBox

    from spar_desktop.core.config import SettingsError, load_settings
    from spar_desktop.core.library.database import IndexTooNewError, Library
    from spar_desktop.ui.base.style import apply_style

    settings_problem = None
    try:  # the app's program properties too: Chroma in a helper process (see load_settings)
        settings = load_settings(data_dir, app=True)
    except SettingsError as exc:  # a broken settings.json must not lock people out of the app
        settings_problem = str(exc)
        settings = load_settings(data_dir, app=True, preferences=False)
    from spar_desktop.core import store_lock

    store_lock.set_program("SPAR Desktop")  # how a `spar` command told the store is busy names us
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    log_path = setup_logging(settings.data_dir)
    log.info("starting SPAR Desktop, data dir %s", settings.data_dir)
    from spar_desktop.ui.base import qtcompat

    log.info(qtcompat.describe())

    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setApplicationName("SPAR Desktop")
    app.setOrganizationName("SPAR")
    app.setDesktopFileName("spar-desktop")  # the taskbar finds the menu entry's icon
    from spar_desktop.resources_path import icon_path

    icon = icon_path()
    if icon is not None:
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(str(icon)))
    apply_style(app)
    interactive = not args.smoke and app.platformName() != "offscreen"
    crashes: list[str] = []
    install_excepthook(log_path, interactive, crashes)

    lock = QLockFile(str(settings.layout.app_lock))
    if not lock.tryLock(200):
        message = f"SPAR Desktop is already running for the data folder {settings.data_dir}."
        log.info(message)
        print(message, file=sys.stderr)
        if interactive:
            QMessageBox.information(None, "SPAR Desktop", message + "\n\nSwitch to the open window instead.")
        return 0
    try:
        try:
            library = Library.open(settings)
        except IndexTooNewError as exc:  # written by a newer release: refused untouched, no traceback
            log.error("cannot open the library: %s", exc)
            message = f"Cannot open the metadata index: {exc}"
            print(message, file=sys.stderr)
            if interactive:
                QMessageBox.critical(None, "SPAR Desktop", message)
            return 1
        except Exception as exc:  # noqa: BLE001 - unreachable server, bad URL: say so, do not crash
            log.exception("cannot open the library")
            message = f"Cannot open the metadata index ({settings.resolved_database_url}): {exc}"
            print(message, file=sys.stderr)
            if interactive:
                QMessageBox.critical(None, "SPAR Desktop", message + f"\n\nLog: {log_path}")
            return 1
        return _event_loop(app, qasync, settings, library, args, interactive, crashes, settings_problem)
    finally:
        lock.unlock()


def _event_loop(app, qasync, settings, library, args, interactive: bool, crashes: list[str],
                settings_problem: Optional[str]) -> int:
    from spar_desktop.ui.main_window import MainWindow

    from spar_desktop.ui.base.aio import install_asyncgen_hooks

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    install_asyncgen_hooks(loop)  # qasync leaves them out: streamed HTTP responses must close cleanly
    quit_event = asyncio.Event()
    app.aboutToQuit.connect(quit_event.set)
    from spar_desktop.ui.base.runtime import preload_in_background, tune_for_ui

    # No splash: the window is usable at once. The search engine's libraries (ONNX Runtime, the
    # tokenizer, extractors, chunkers) load afterwards on a worker; none of them stalls the
    # window for long now that torch is off the path (benchmarks/startup.py, ui_stall.py).
    window = MainWindow(settings, library, interactive=interactive)
    window.show()
    app.processEvents()
    log.info("window shown")
    tune_for_ui()
    if args.paths and not args.smoke:  # folders dropped on the menu entry / launcher
        window.controller.index_paths(args.paths)
    if settings.preload:  # SPAR_PRELOAD=0: nothing loads until it is needed
        # Once the library shows: its imports held the GIL while a 1M index's table and tags loaded.
        window.when_library_shown(lambda: preload_in_background(window.runner, settings))
    if settings_problem:
        window.statusBar().showMessage(f"settings.json ignored: {settings_problem}", 30000)
    exit_code = [0]

    if args.smoke:
        from spar_desktop.ui.tools.smoke import run_smoke

        async def smoke() -> None:
            try:
                exit_code[0] = await run_smoke(window, Path(args.smoke), crashes)
            except Exception:  # noqa: BLE001 - the runner itself failing is a failed smoke run
                log.exception("smoke run failed")
                exit_code[0] = 1
            window.close()
            app.quit()

        asyncio.ensure_future(smoke())
    with loop:
        loop.run_until_complete(quit_event.wait())
    library.close()
    if crashes and not interactive:
        exit_code[0] = exit_code[0] or 1  # nobody saw a dialog: the exit code must tell
    log.info("exit %s", exit_code[0])
    return exit_code[0]


if __name__ == "__main__":
    sys.exit(main())
