"""`spar ws search` in a new process opens at most two database sessions: one reads the workspace,
its freshness and its saved searcher, one writes the query log and the last use (issue 33)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from spar_desktop.cli import main

# Counts, in the search's own process, every ORM transaction that reached the database and every
# Library.session() opened, whoever opened them.
COUNTING = """
import sys
from sqlalchemy import event
from sqlalchemy.orm import Session
from spar_desktop.cli import main
from spar_desktop.core.library.database import Library

begun = []
event.listen(Session, "after_begin", lambda session, transaction, connection: begun.append(id(session)))
opened = []
plain = Library.session

def counted(self):
    opened.append(1)
    return plain(self)

Library.session = counted
code = main(sys.argv[1:])
print("SESSIONS", len(opened), len(set(begun)), len(begun), file=sys.stderr)
sys.exit(code)
"""


def _search(data: Path, *args: str) -> tuple[dict, tuple[int, int, int]]:
    done = subprocess.run([sys.executable, "-c", COUNTING, "--data-dir", str(data), "ws", "search", *args, "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("SESSIONS"))
    opened, sessions, transactions = (int(n) for n in line.split()[1:])
    return json.loads(done.stdout), (opened, sessions, transactions)


def test_a_cli_search_opens_at_most_two_database_sessions(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    (share / "Engineering").mkdir(parents=True)
    (share / "Engineering" / "turbine.md").write_text("Turbine T7 blade inspection found leading edge erosion.",
                                                      encoding="utf-8")
    (share / "Engineering" / "gearbox.md").write_text("Gearbox oil was contaminated with water.", encoding="utf-8")
    (share / "Finance").mkdir()
    (share / "Finance" / "budget.md").write_text("The blade budget for 2023.", encoding="utf-8")
    for args in (["index", str(share), "--quiet"], ["ws", "create", "eng", "--tag", "Engineering"],
                 ["ws", "build", "eng"]):
        assert main(["--data-dir", str(data), *args]) == 0
    capsys.readouterr()

    found, (opened, sessions, transactions) = _search(data, "eng", "blade erosion")
    assert Path(found["hits"][0]["path"]).name == "turbine.md" and not found["stale"]
    assert opened <= 2 and sessions <= 2 and transactions <= 2, (opened, sessions, transactions)

    # Out of date (a new file the filter admits): the freshness check is read in the same session.
    (share / "Engineering" / "pump.md").write_text("Pump seals leak after blade erosion.", encoding="utf-8")
    assert main(["--data-dir", str(data), "index", str(share), "--quiet"]) == 0
    capsys.readouterr()
    found, (opened, sessions, transactions) = _search(data, "eng", "blade erosion")
    assert found["stale"] and [Path(p).name for p in found["freshness"]["new"]] == ["pump.md"]
    assert opened <= 2 and sessions <= 2 and transactions <= 2, (opened, sessions, transactions)
