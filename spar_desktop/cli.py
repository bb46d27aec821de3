"""`spar`: the command-line face of the core. Each command lives in spar_desktop/commands/."""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import sys
from typing import Optional, Sequence

from spar_desktop import __version__
from spar_desktop.commands.common import CommandError
from spar_desktop.core.config import SettingsError
from spar_desktop.core.migrations import IndexTooNewError, MigrationError

# Command modules, each exposing register(subparsers). Imported lazily by name so `spar --help`
# and light commands stay fast (heavy libraries load only inside the command that needs them).
COMMAND_MODULES = [
    "spar_desktop.commands.index_cmd",
    "spar_desktop.commands.sample_cmd",
    "spar_desktop.commands.files_cmd",
    "spar_desktop.commands.tags_cmd",
    "spar_desktop.commands.status_cmd",
    "spar_desktop.commands.ws_cmd",
    "spar_desktop.commands.eval_cmd",
    "spar_desktop.commands.ask_cmd",
    "spar_desktop.commands.thread_cmd",
    "spar_desktop.commands.relations_cmd",
    "spar_desktop.commands.memory_cmd",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spar", description="SPAR Desktop command line")
    parser.add_argument("--version", action="version", version=f"spar {__version__}")
    parser.add_argument("--data-dir", help="where the index, caches and workspaces live (env SPAR_DATA_DIR)")
    parser.add_argument("--database-url", help="SQLAlchemy URL of the metadata index (default: SQLite in the data dir)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


# A young-generation collection every 100,000 allocations instead of 700: a command imports
# SQLAlchemy and numpy (~400k objects) and builds tens of thousands of rows, and the default
# threshold ran ~350 collections a request (0.1-0.25 s of a 2 s `ws create`). Cycles are still
# collected, so a long scan's memory stays bounded.
GC_THRESHOLD = (100_000, 20, 10)


def main(argv: Optional[Sequence[str]] = None) -> int:
    gc.set_threshold(*GC_THRESHOLD)
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(f"spar: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except SettingsError as exc:
        print(f"spar: settings error: {exc}", file=sys.stderr)
        return 2
    except IndexTooNewError as exc:  # a newer release's index: refused, nothing written
        print(f"spar: error: {exc}", file=sys.stderr)
        return 2
    except MigrationError as exc:  # the upgrade was undone; the message says where the backup is
        print(f"spar: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("spar: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - only the machine's failures are turned into words here
        from spar_desktop.core.storage_errors import storage_failure

        message = storage_failure(exc, _data_dir_of(args))
        if message is None:
            raise
        logging.getLogger("spar").debug("storage failure", exc_info=True)
        print(f"spar: error: {message}", file=sys.stderr)
        return 1


def _data_dir_of(args) -> str:
    """The data dir the command used, for the message (the default when none was given)."""
    try:
        from spar_desktop.commands.common import settings_from_args

        return str(settings_from_args(args).data_dir)
    except Exception:  # noqa: BLE001 - a message must not fail on its way out
        return str(getattr(args, "data_dir", None) or "the data folder")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
