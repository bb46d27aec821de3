"""The manager takes each workspace's lock itself (core/workspaces/locks.py), so every caller (the
app's workers, chat's retrieval thread, the CLI) gets the same exclusion; the lock is re-entrant
and per workspace, names ignoring case."""

from __future__ import annotations

import threading

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.selection import WorkspaceFilter


def test_a_workspace_operation_waits_for_its_lock_and_only_its_own(tmp_path):
    library = Library.open(load_settings(tmp_path / "data"))
    try:
        mgr = Workspaces(library)
        for name in ("Ops", "Other"):
            mgr.create(name, filter=WorkspaceFilter(all_files=True))
        assert mgr.lock("ops") is mgr.lock("OPS") and mgr.lock("ops") is not mgr.lock("other")
        done = {}

        def edit(name: str) -> None:
            mgr.set_filter(name, WorkspaceFilter(all_files=True, request=f"edited {name}"))
            done[name] = True

        with mgr.lock("OPS"):
            with mgr.lock("ops"):  # re-entrant: a memory round may call a locked method of it
                pass
            blocked = threading.Thread(target=edit, args=("Ops",))
            free = threading.Thread(target=edit, args=("Other",))
            blocked.start()
            free.start()
            free.join(10)
            blocked.join(0.3)
            assert done == {"Other": True}  # another workspace goes on; this one waits
        blocked.join(10)
        assert done == {"Other": True, "Ops": True} and mgr.get("Ops").request == "edited Ops"
    finally:
        library.close()
