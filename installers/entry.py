"""Entry point of the frozen app (PyInstaller bundles; installers/spar-desktop.spec).

One bundle, several roles, chosen from the command line:

* ``spar-desktop [ARGS]`` — the desktop app (``spar_desktop.ui.app``);
* ``spar [ARGS]`` (the same executable under the name ``spar``: a symlink on Linux/macOS, a
  console build on Windows) or ``spar-desktop --cli ARGS`` — the command line;
* ``<exe> -m MODULE ARGS`` — what ``python -m MODULE`` does: the app starts its Chroma helper
  process as ``sys.executable -m spar_desktop.core.retrieval.chroma_host PATH``, and in a bundle
  ``sys.executable`` is this program;
* multiprocessing's own children (forkserver, spawn, resource tracker) — freeze_support().

The app and the CLI run through runpy with ``alter_sys``, so ``__main__`` is the real module
(with a ``__spec__``): the scan worker's forkserver children can then re-import it by name,
as they do from a virtualenv.
"""

from __future__ import annotations

import multiprocessing
import os
import runpy
import sys


def _run_module(name: str, argv: list[str]) -> None:
    sys.argv = [name] + argv
    runpy.run_module(name, run_name="__main__", alter_sys=True)


def _helper_streams() -> None:
    # A windowed (no console) Windows build starts children without a stderr handle; the
    # helper redirects stray output to stderr and needs one.
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process


def main() -> None:
    multiprocessing.freeze_support()  # returns at once unless this is a multiprocessing child
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "-m":
        _helper_streams()
        _run_module(args[1], args[2:])
        return
    invoked = os.path.splitext(os.path.basename(sys.argv[0]))[0].lower()
    if invoked == "spar" or (args and args[0] == "--cli"):
        _run_module("spar_desktop.cli", args[1:] if args and args[0] == "--cli" else args)
        return
    _run_module("spar_desktop.ui.app", args)


if __name__ == "__main__":
    main()
