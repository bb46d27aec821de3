"""The locks that keep one process's threads from colliding on a workspace.

One re-entrant lock per workspace (by name, ignoring case): a build, a search, a filter edit, an
archive, a delete and a memory round of the same workspace never interleave (a build replaces
the collection and the searcher a search reads; a memory round rewrites both). One more for the
tag vocabulary index, which a request's matching syncs. ``Workspaces`` owns them and its methods
take them, so the app's workers, chat's retrieval thread and the CLI all run under the same
rules. Other processes are kept apart by the OS locks (build_lock.py, store_lock.py).
"""

from __future__ import annotations

import threading


class WorkspaceLocks:
    def __init__(self) -> None:
        self.tags = threading.RLock()
        self._by_name: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def workspace(self, name: str) -> threading.RLock:
        with self._guard:
            return self._by_name.setdefault(name.casefold(), threading.RLock())
