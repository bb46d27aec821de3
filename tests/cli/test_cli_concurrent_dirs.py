"""The desktop app and `spar` on one data dir: while the app has the local vector store open, a
command that needs the store says who holds it and exits 1 (no traceback); searching a built
workspace, listing and indexing still work. Once the app is killed (kill -9), the command succeeds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = r"""
import sys, time
from dataclasses import replace
from spar_desktop.core import store_lock
from spar_desktop.core.config import load_settings
from spar_desktop.core.workspaces.engine import Engine
store_lock.set_program("SPAR Desktop")  # as spar_desktop/ui/app.py names itself
Engine(replace(load_settings(sys.argv[1]), chroma_process=True)).chroma  # the app's helper process
print("open", flush=True)
time.sleep(600)
"""


def spar(data: Path, *args: str) -> subprocess.CompletedProcess:
    code = "import sys; from spar_desktop.cli import main; sys.exit(main())"  # as the `spar` script runs
    return subprocess.run([sys.executable, "-c", code, "--data-dir", str(data), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_cli_build_while_the_app_holds_the_store_then_after_it_was_killed(tmp_path):
    share, data = tmp_path / "share", tmp_path / "data"
    (share / "Finance").mkdir(parents=True)
    (share / "Finance" / "budget.md").write_text("The capital budget has a contingency of fifty thousand.",
                                                 encoding="utf-8")
    (share / "Finance" / "audit.md").write_text("The external audit found no material misstatement.",
                                                encoding="utf-8")
    ok(spar(data, "index", str(share), "--quiet"))
    ok(spar(data, "ws", "create", "fin", "--tag", "Finance"))
    ok(spar(data, "ws", "build", "fin"))

    app = subprocess.Popen([sys.executable, "-c", APP, str(data)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert app.stdout.readline().strip() == "open"
        # What never opens the store goes on as usual.
        assert "budget.md" in ok(spar(data, "ws", "search", "fin", "capital budget contingency"))
        (share / "Finance" / "forecast.md").write_text("Forecast: spending will exceed the plan by March.",
                                                       encoding="utf-8")
        ok(spar(data, "index", str(share), "--quiet"))
        assert [w["name"] for w in json.loads(ok(spar(data, "ws", "list", "--json")))] == ["fin"]
        # What needs it is refused, with who holds it and what to do.
        refused = spar(data, "ws", "build", "fin")
        assert refused.returncode == 1
        assert f"in use by SPAR Desktop (pid {app.pid}" in refused.stderr, refused.stderr
        assert str(data / "chroma") in refused.stderr and "close it" in refused.stderr
        assert "Traceback" not in refused.stderr
        # Refused before anything was marked: the workspace is still built and searchable.
        assert "budget.md" in ok(spar(data, "ws", "search", "fin", "capital budget"))
    finally:
        os.kill(app.pid, signal.SIGKILL)  # a crash: the OS drops its lock
        app.wait()
        app.stdout.close()
    built = json.loads(ok(spar(data, "ws", "build", "fin", "--json")))
    assert built["ready"] == 3
    assert "forecast.md" in ok(spar(data, "ws", "search", "fin", "spending exceed plan March"))
