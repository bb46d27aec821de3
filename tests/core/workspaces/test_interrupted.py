"""A build killed part way reads as interrupted (never 'building' for ever) unless a build of it is
really running, here or in another process; saved search indexes of deleted workspaces go away."""

from __future__ import annotations

import fcntl
import sys

import pytest

from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.models import Workspace, WorkspaceStatus
from spar_desktop.core.workspaces.selection import WorkspaceFilter
from tests.core.workspaces.test_lifecycle import env  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the test takes the lock with flock")


def left_building(mgr: Workspaces, name: str) -> None:
    """What a process killed mid-build leaves in the database."""
    with mgr.library.session() as s:
        s.query(Workspace).filter(Workspace.name == name).update({"status": WorkspaceStatus.BUILDING})


def test_a_killed_build_reads_as_interrupted_and_building_again_resumes(env):  # noqa: F811
    mgr, _, _ = env
    mgr.create("all", filter=WorkspaceFilter(all_files=True))
    seen_while_building: list[str] = []
    mgr.build("all", progress=lambda p: seen_while_building.append(mgr.get("all").status))
    # Its own worker thread's build is running: never shown as interrupted (the last reports
    # come after the build stored 'active').
    assert WorkspaceStatus.BUILDING in seen_while_building
    assert WorkspaceStatus.INTERRUPTED not in seen_while_building
    left_building(mgr, "all")
    info = mgr.get("all")
    assert info.status == WorkspaceStatus.INTERRUPTED and info.interrupted
    assert "build again" in info.last_error
    assert [i.status for i in mgr.list()] == [WorkspaceStatus.INTERRUPTED]
    before = mgr.engine.encoder.texts_encoded
    report = mgr.build("all")
    assert mgr.get("all").status == WorkspaceStatus.ACTIVE and report.ready > 0
    assert mgr.engine.encoder.texts_encoded == before  # everything came from the cache


def test_a_build_running_in_another_process_is_not_interrupted(env):  # noqa: F811
    mgr, _, _ = env
    info, _ = mgr.create("all", filter=WorkspaceFilter(all_files=True))
    left_building(mgr, "all")
    lock = mgr.library.settings.layout.build_lock(info.collection)
    lock.parent.mkdir(parents=True)
    with open(lock, "a+b") as fh:  # flock conflicts between open files, as another process's would
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        assert mgr.get("all").status == WorkspaceStatus.BUILDING
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    assert mgr.get("all").status == WorkspaceStatus.INTERRUPTED


def test_orphaned_search_indexes_are_removed_at_a_build_and_a_delete_not_on_construction(env):  # noqa: F811
    mgr, _, _ = env
    mgr.create("kept", filter=WorkspaceFilter(all_files=True))
    mgr.create("gone", filter=WorkspaceFilter(all_files=True))
    mgr.build("kept")
    top = mgr.library.settings.data_dir / "workspaces"
    live = top / mgr.get("kept").collection
    assert (live / "searcher" / "CURRENT").exists()

    def orphan(name: str):
        (top / name / "searcher" / "state-1").mkdir(parents=True)
        (top / name / "searcher" / "CURRENT").write_text("state-1")
        return top / name

    first = orphan("ws-deleted-elsewhere-0a1b2c3d")
    foreign = top / "ws-not-ours"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("someone else's")
    Workspaces(mgr.library, mgr.engine)  # constructing a manager (read-only commands do) touches nothing
    assert first.exists()
    mgr.build("kept")  # a build tidies up
    assert not first.exists() and foreign.exists() and (live / "searcher" / "CURRENT").exists()
    second = orphan("ws-deleted-elsewhere-4e5f6a7b")
    mgr.delete("gone")
    assert not second.exists() and foreign.exists() and (live / "searcher" / "CURRENT").exists()
    assert mgr.search("kept", "gearbox oil").hits
