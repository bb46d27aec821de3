"""`python -m spar_desktop` launches the desktop app (pass --cli to run the `spar` CLI instead)."""

import sys


def run() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--cli":
        from spar_desktop.cli import main as cli_main

        return cli_main(sys.argv[2:])
    from spar_desktop.ui.app import main as gui_main

    return gui_main()


if __name__ == "__main__":
    sys.exit(run())
