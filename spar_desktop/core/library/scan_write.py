"""Writing a scan's rows in batches: new and changed files with their folder/date tags and their
containers' members, one transaction per batch, the report counting only what is committed."""

from __future__ import annotations

import logging
import os
from typing import Optional

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import OperationalError

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.virtual import VIRTUAL_SEP
from spar_desktop.core.library.bulk import ids_appended, insert_rows, insert_tuples
from spar_desktop.core.library.children import ContainerListing, read_container, remove_children, sync_children
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, FileTag, TagSource, utcnow
from spar_desktop.core.library.probe import CONTAINER_FORMATS
from spar_desktop.core.library.probe_result import ProbeResult
from spar_desktop.core.library.query_indexes import drop_query_indexes
from spar_desktop.core.library.scan_report import UNEXPECTED_RECORD, ScanReport
from spar_desktop.core.library.tags import TagCache, date_tag_specs, path_tag_specs
from spar_desktop.core.progress import Progress, ProgressCallback

log = logging.getLogger(__name__)

# A known row: (path, id, size, mtime_ns, status, content_hash, format).
NewFile = tuple[dict, str, ProbeResult]  # (row, shown path, probe result)
ChangedFile = tuple[tuple, dict, str, ProbeResult]  # (known row, row, shown path, probe result)
_LINK_KEYS = ("file_id", "tag_id", "source")


class BatchWriter:
    """The pending rows of one scan run and their writing; ``flush`` empties them into the index."""

    def __init__(self, library: Library, folder_id: int, report: ScanReport, progress: ProgressCallback,
                 budget: ExtractionBudget) -> None:
        self.lib = library
        self.folder_id = folder_id
        self.report = report
        self.progress = progress
        self.budget = budget
        self.pending_new: list[NewFile] = []
        self.pending_changed: list[ChangedFile] = []
        self.pending_unchanged = 0
        self.tag_cache: Optional[TagCache] = None
        self.listings: dict[str, ContainerListing] = {}  # path -> members of containers in the batch being written
        self.chain_ids: dict[tuple[str, object], int] = {}  # (source, folder path or (year, month)) → tag id
        # Set by the scan when it may bulk-load: the first batch of at least this many new files
        # drops the query indexes (re-created when the scan ends, or at the next open if killed).
        self.bulk_min: Optional[int] = None
        self.dropped_indexes = False

    @property
    def pending(self) -> int:
        return len(self.pending_new) + len(self.pending_changed)

    def add(self, known: Optional[tuple], row: dict, shown: str, result: ProbeResult) -> None:
        """A probed file: new when the index does not know it, else changed."""
        if known is None:
            self.pending_new.append((row, shown, result))
        else:
            self.pending_changed.append((known, row, shown, result))

    def flush(self) -> None:
        if not (self.pending_new or self.pending_changed):
            if self.pending_unchanged:
                self._count_unchanged()
            return
        new, changed = self.pending_new, self.pending_changed
        self.pending_new, self.pending_changed = [], []
        # Archives and mails are listed (every member streamed and hashed) before the write
        # transaction opens: a large archive must not hold the index's write lock meanwhile.
        self.listings = {row["path"]: self._list(row) for row in [r for r, _, _ in new] + [r for _, r, _, _ in changed]
                         if row["format"] in CONTAINER_FORMATS and row["status"] == FileStatus.OK}
        if self.bulk_min is not None and not self.dropped_indexes and len(new) >= self.bulk_min:
            drop_query_indexes(self.lib.engine)
            self.dropped_indexes = True
        try:
            self._write(new, changed)
        except OperationalError:
            raise  # disk full, database locked or gone: the whole job's problem, not one file's
        except Exception:  # noqa: BLE001 - one row the database refuses must not lose the batch
            log.exception("writing a batch of %d files failed; writing them one by one", len(new) + len(changed))
            for item in new:
                self._write_alone([item], [])
            for item in changed:
                self._write_alone([], [item])
        self._count_unchanged()

    def _count_unchanged(self) -> None:
        self.report.unchanged += self.pending_unchanged
        self.pending_unchanged = 0
        done = self.report.seen
        self.progress(Progress(done, None, f"{done} files"))

    def _write_alone(self, new: list[NewFile], changed: list[ChangedFile]) -> None:
        """One file of a batch that failed: as probed, else as an ERROR row, else a problem line."""
        _, row, shown, result = (None, *new[0]) if new else changed[0]
        try:
            self._write(new, changed)
            return
        except OperationalError:
            raise
        except Exception:  # noqa: BLE001
            log.exception("cannot record %s in the index as probed", shown)
        failed = dict(row, status=FileStatus.ERROR, error=UNEXPECTED_RECORD, content_hash=None, title=None,
                      author=None, created_at=None, page_count=None, extra=None)
        failed_result = ProbeResult(row["size"], row["mtime_ns"], row["format"], None, FileStatus.ERROR, UNEXPECTED_RECORD)
        try:
            if new:
                self._write([(failed, shown, failed_result)], [])
            else:
                self._write([], [(changed[0][0], failed, shown, failed_result)])
        except OperationalError:
            raise
        except Exception:  # noqa: BLE001 - not even as an error (its path is taken?): a problem line
            log.exception("cannot record %s in the index at all", shown)
            self.report.problems.append((shown, UNEXPECTED_RECORD))

    def _write(self, new: list[NewFile], changed: list[ChangedFile]) -> None:
        """Write new and changed rows (with their tags and child documents) in one transaction;
        the report counts them only once it is committed."""
        tally = ScanReport(root="")
        try:
            with self.lib.session() as s:
                now = utcnow()
                if new:
                    self._write_new(s, new, tally, now)
                if changed:
                    self._write_changed(s, changed, tally, now)
        except BaseException:
            # Tags created in the rolled-back transaction do not exist: forget their cached ids.
            self.chain_ids, self.tag_cache = {}, None
            raise
        report = self.report
        report.new += tally.new
        report.changed += tally.changed
        report.restored += tally.restored
        report.children += tally.children
        report.problems.extend(tally.problems)

    def _write_new(self, s, pending_new: list[NewFile], tally: ScanReport, now) -> None:
        conn = s.connection()
        rows = [row for row, _, _ in pending_new]
        for row in rows:
            row["first_seen_at"] = now
        # Plain executemany (no RETURNING: several times faster on SQLite); then the new ids.
        top = conn.execute(select(func.max(File.id))).scalar() or 0
        insert_rows(conn, File.__table__, rows)
        ids = self._new_ids(conn, top, rows)
        self._insert_links(conn, self._tag_links(s, ids, rows))
        for row, shown, result in pending_new:
            if result.status != FileStatus.OK:
                tally.problems.append((shown, result.error or result.status))
        tally.new += len(ids)
        for file_id, (row, shown, result) in zip(ids, pending_new):
            if row["format"] in CONTAINER_FORMATS and row["status"] == FileStatus.OK:
                self._sync_children(s, file_id, row, tally)

    @staticmethod
    def _new_ids(conn, top: int, rows: list[dict]) -> list[int]:
        """The ids of ``rows``, just inserted in this order into files whose largest id was ``top``:
        on SQLite from the rowid rule (``ids_appended``); else (or when that cannot tell) the ids
        above ``top`` are read back and matched by path (unique): rows another writer added are
        ignored, a path not found that way is looked up."""
        ids = ids_appended(conn, File.id, top, len(rows))
        if ids is not None:
            return ids
        paths = [r["path"] for r in rows]
        id_of = dict(conn.execute(select(File.path, File.id).where(File.id > top)).all())
        lost = [p for p in paths if p not in id_of]
        for i in range(0, len(lost), 500):
            id_of.update(conn.execute(
                select(File.path, File.id).where(File.path.in_(lost[i:i + 500]))).all())
        return [id_of[p] for p in paths]

    def _write_changed(self, s, pending_changed: list[ChangedFile], tally: ScanReport, now) -> None:
        conn = s.connection()
        changed_ids = []
        for known, row, shown, result in pending_changed:
            values = dict(row)
            if known[4] == FileStatus.MISSING and row["content_hash"] == known[5]:
                tally.restored += 1
            else:
                tally.changed += 1
            if row["content_hash"] != known[5] and known[5] is not None:
                values["content_version"] = File.content_version + 1
                values["changed_at"] = now
            conn.execute(update(File).where(File.id == known[1]).values(**values))
            changed_ids.append(known[1])
            if result.status != FileStatus.OK:
                tally.problems.append((shown, result.error or result.status))
        for i in range(0, len(changed_ids), 500):
            conn.execute(delete(FileTag).where(FileTag.file_id.in_(changed_ids[i:i + 500]),
                                               FileTag.source.in_([TagSource.PATH, TagSource.DATE])))
        self._insert_links(conn, self._tag_links(s, changed_ids, [row for _, row, _, _ in pending_changed]))
        for known, row, shown, result in pending_changed:
            if row["format"] in CONTAINER_FORMATS and row["status"] == FileStatus.OK:
                self._sync_children(s, known[1], row, tally)
            elif known[6] in CONTAINER_FORMATS or known[6] == "email":
                remove_children(s, row["path"])

    def _list(self, row: dict) -> ContainerListing:
        self.progress(Progress(self.report.seen, None, f"reading inside {row['name']}"))
        return read_container(row["raw_path"] and os.fsdecode(row["raw_path"]) or row["path"], row["format"], self.budget)

    def _sync_children(self, s, file_id: int, row: dict, tally: ScanReport) -> None:
        """A new or changed container's members (listed by flush) into child rows with its tags."""
        listing = self.listings.get(row["path"]) or self._list(row)
        sync = sync_children(s, file_id, row, listing)
        changed = sync.added + sync.updated
        if sync.updated:
            ids = [i for i, _ in sync.updated]
            for k in range(0, len(ids), 500):
                s.execute(delete(FileTag).where(FileTag.file_id.in_(ids[k:k + 500]),
                                                FileTag.source.in_([TagSource.PATH, TagSource.DATE])))
        if changed:
            self._insert_links(s.connection(), self._tag_links(s, [i for i, _ in changed], [r for _, r in changed]))
        tally.children += len(changed)
        tally.problems.extend(sync.problems)

    @staticmethod
    def _insert_links(conn, links: list[tuple[int, int, str]]) -> None:
        """Folder and date links are confirmed with full score: the folder is where the file is."""
        insert_tuples(conn, FileTag.__table__, _LINK_KEYS, links, {"score": 1.0, "confirmed": True})

    def _tag_links(self, s, file_ids: list[int], rows: list[dict]) -> list[tuple[int, int, str]]:
        """(file id, tag id, source) of the folder and date links of a batch; tags not seen yet in
        this run are resolved (and created when new) for the whole batch at once."""
        chain_ids = self.chain_ids
        wanted: list[tuple[int, str, object]] = []
        missing: dict[tuple[str, object], list[tuple[str, str]]] = {}
        for file_id, row in zip(file_ids, rows):
            # A child document is filed under its container's folder, not the archive's own ones.
            rel_dir = row["rel_path"].partition(VIRTUAL_SEP)[0].rpartition("/")[0]
            if rel_dir:
                key = (TagSource.PATH, rel_dir)
                wanted.append((file_id, TagSource.PATH, key))
                if key not in chain_ids and key not in missing:
                    missing[key] = path_tag_specs(rel_dir)
            when = row["created_at"] or row["modified_at"]
            if when is not None and row["status"] != FileStatus.ERROR:
                key = (TagSource.DATE, (when.year, when.month))
                wanted.append((file_id, TagSource.DATE, key))
                if key not in chain_ids and key not in missing:
                    missing[key] = date_tag_specs(when)
        if missing:
            if self.tag_cache is None:  # loaded once per run, on the first folder/date not yet seen
                self.tag_cache = TagCache(s)
            keys = list(missing)
            ids = self.tag_cache.ensure_chains(s, [(missing[k], k[0]) for k in keys])
            chain_ids.update(zip(keys, ids))
        return [(file_id, chain_ids[key], source) for file_id, source, key in wanted]
