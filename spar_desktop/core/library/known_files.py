"""What a re-scan knows of a subtree's files, held lean: path -> (path, size, mtime_ns).

A re-scan compares each file's size and mtime with the index; only a file that differs needs the
rest of its stored row (id, status, hash, format). Loading whole rows for a 1M-file share cost
5.6 s of CPU and ~640 bytes a file, before the first folder was listed; the keys alone cost less
than half of both. The stored rows of the few files that differ (and of the files gone at the
end) are read when needed, a batch of paths at a time.

A row that must be probed whatever its size and mtime gets size ``RECHECK``, so the one comparison
per file fails: a missing file (restored, or changed?) and a sampled fingerprint on a readable
format (an index from before full hashing, or a format that became readable).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Iterable

from sqlalchemy import Connection, select

from spar_desktop.core.library.bulk import fetch_rows
from spar_desktop.core.library.models import File, FileStatus
from spar_desktop.core.library.probe import READABLE_FORMATS, SAMPLED_HASH_PREFIX, format_from_name

RECHECK = -1
# A stored row, as the scan's writer reads it: (path, id, size, mtime_ns, status, content_hash, format).
STORED_COLUMNS = (File.path, File.id, File.size, File.mtime_ns, File.status, File.content_hash, File.format)
_BATCH = 500  # paths per lookup (SQLite's bound-variable limit is far above)


def _in_subtree(shown: str, prefix: str):
    # Child documents (parent_id set) are not on disk: their container's scan keeps them.
    return ((File.path == shown) | File.path.startswith(prefix, autoescape=True)) & File.parent_id.is_(None)


def load_keys(conn: Connection, shown: str, prefix: str) -> dict[str, tuple[str, int, int]]:
    """path -> (path, size, mtime_ns) of the stored files at ``shown`` or under ``prefix``."""
    rows = fetch_rows(conn, select(File.path, File.size, File.mtime_ns).where(_in_subtree(shown, prefix)))
    keys = dict(zip(map(itemgetter(0), rows), rows))  # built in C; the driver's tuples are the values
    del rows
    # Two reads through the status and hash indexes, not a pass over every row (0.9 s at 1M).
    sampled_from, sampled_to = SAMPLED_HASH_PREFIX, SAMPLED_HASH_PREFIX[:-1] + chr(ord(SAMPLED_HASH_PREFIX[-1]) + 1)
    for recheck in (File.status == FileStatus.MISSING,
                    (File.content_hash >= sampled_from) & (File.content_hash < sampled_to)):
        for path, status, mtime_ns in fetch_rows(conn, select(File.path, File.status, File.mtime_ns).where(
                recheck & _in_subtree(shown, prefix))):
            if status == FileStatus.MISSING or format_from_name(path) in READABLE_FORMATS:
                keys[path] = (path, RECHECK, mtime_ns)
    return keys


def stored_rows(conn: Connection, paths: Iterable[str]) -> dict[str, tuple]:
    """path -> the stored row (``STORED_COLUMNS``) of those of ``paths`` the index holds as files
    on disk (not child documents)."""
    paths = list(paths)
    found: dict[str, tuple] = {}
    for start in range(0, len(paths), _BATCH):
        chunk = paths[start:start + _BATCH]
        rows = fetch_rows(conn, select(*STORED_COLUMNS).where(File.path.in_(chunk) & File.parent_id.is_(None)))
        found.update(zip(map(itemgetter(0), rows), rows))
    return found
