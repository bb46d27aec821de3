"""The workspace lifecycle on each storage set-up: one desktop (SQLite + the local Chroma store), and
a team's servers (a real `chroma run` on loopback, with SQLite or a real PostgreSQL) where a second
desktop with its own data dir works on the same workspaces. Real encoder, a few small files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.models import WorkspaceStatus
from spar_desktop.core.workspaces.sparws import export_workspace, import_workspace
from tests.support.servers import chroma_server, fresh_database, postgres_server

NOTES = {
    "Finance/budget.md": "The capital budget for the year is 1.2 million pounds, with a contingency of fifty thousand.",
    "Finance/invoice.md": "Invoice 4411 for the crane hire was paid late; the supplier charged interest.",
    "Finance/audit.md": "The external audit found no material misstatement in the accounts.",
    "Operations/gearbox.md": "The gearbox bearing failed after oil contamination; vibration alarms came first.",
    "Operations/blade.md": "A leading edge erosion survey found cracks on blade two.",
}


def _server_or_skip(start):
    try:
        with start() as url:
            yield url
    except RuntimeError as exc:
        if os.environ.get("CI"):
            raise  # CI has both (.ci/run installs PostgreSQL; chroma comes with chromadb): a failure there
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def chroma_url():
    yield from _server_or_skip(chroma_server)


@pytest.fixture(scope="module")
def pg_server():
    yield from _server_or_skip(postgres_server)


@pytest.fixture(params=["sqlite+local-chroma", "sqlite+chroma-server", "postgresql+chroma-server"])
def servers(request) -> dict[str, str]:
    """Settings overrides for the set-up: none for one desktop, server URLs for a team."""
    database, vectors = request.param.split("+")
    overrides = {}
    if vectors == "chroma-server":
        overrides["chroma_url"] = request.getfixturevalue("chroma_url")
    if database == "postgresql":
        overrides["database_url"] = fresh_database(request.getfixturevalue("pg_server"))
    return overrides


def desktop(data_dir: Path, overrides: dict[str, str]) -> Workspaces:
    settings = load_settings(data_dir, **overrides)
    return Workspaces(Library.open(settings), Engine(settings, get_encoder("cpu")))


def close(mgr: Workspaces) -> None:
    mgr.engine.close()
    mgr.library.close()


def top(mgr: Workspaces, name: str, query: str) -> str:
    return Path(mgr.search(name, query, k=3).hits[0].path).name


def test_workspace_lifecycle(servers, tmp_path):
    share = tmp_path / "share"
    for rel, text in NOTES.items():
        (share / rel).parent.mkdir(parents=True, exist_ok=True)
        (share / rel).write_text(text, encoding="utf-8")
    mgr = desktop(tmp_path / "desk1", servers)
    try:
        Scanner(mgr.library).scan([str(share)])
        mgr.create("fin", tags=["Finance"])
        first = mgr.build("fin")
        assert first.ready == 3 and first.embedded_chunks == first.chunks
        assert top(mgr, "fin", "capital budget contingency") == "budget.md"

        # A file changes: the update embeds only it, and finds its new words.
        (share / "Finance" / "invoice.md").write_text("Forecast: spending will exceed the budget by March.",
                                                       encoding="utf-8")
        Scanner(mgr.library).scan([str(share)])
        update = mgr.build("fin")
        assert (update.ready, update.reused_documents, update.embedded_chunks) == (3, 2, 1)
        assert top(mgr, "fin", "spending forecast exceed March") == "invoice.md"

        mgr.archive("fin")
        assert mgr.get("fin").status == WorkspaceStatus.ARCHIVED
        with pytest.raises(WorkspaceError, match="archived"):
            mgr.search("fin", "budget")
        again = mgr.reactivate("fin")
        assert again.embedded_chunks == 0 and again.chunks == update.chunks  # from the cache
        assert top(mgr, "fin", "capital budget contingency") == "budget.md"

        report = import_workspace(mgr, export_workspace(mgr, "fin", tmp_path / "fin.sparws"))
        assert report.name == "fin (2)" and report.matched_by_hash == 3
        assert mgr.build("fin (2)").embedded_chunks == 0
        assert top(mgr, "fin (2)", "external audit misstatement") == "audit.md"
        if "chroma_url" in servers:
            assert not list((tmp_path / "desk1").glob("chroma*"))  # vectors on the server only; no store lock
    finally:
        close(mgr)

    if "database_url" not in servers:
        return
    # A second desktop on the same servers sees the workspaces and searches them; its caches are
    # its own, so its first search embeds the workspace's text again to build its local index.
    other = desktop(tmp_path / "desk2", servers)
    try:
        assert {w.name for w in other.list()} == {"fin", "fin (2)"}
        assert top(other, "fin", "capital budget contingency") == "budget.md"
        assert top(other, "fin", "spending forecast exceed March") == "invoice.md"
        assert other.get("fin").chunk_count == update.chunks
    finally:
        close(other)
