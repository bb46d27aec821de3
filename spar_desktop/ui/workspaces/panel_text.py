"""What the workspace panel says about a workspace, as text (no widgets): its status and
description line, when it was built, whether it is out of date or was archived for being unused,
and what search learned from feedback. The workspace view reads some of them too."""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # types only: the workspace modules load on a worker (workspaces/ops.py)
    from spar_desktop.core.workspaces.freshness import Freshness
    from spar_desktop.core.workspaces.manager import WorkspaceInfo


def status_text(row: WorkspaceInfo, building: bool) -> str:
    if building:
        return "updating" if row.built_at and row.status != "archived" else "building"
    if row.status == "building":  # a build that never finished (the app closed mid-build)
        return "interrupted"
    return {"draft": "not built"}.get(row.status, row.status)


def local_time(dt: datetime) -> str:
    """The index stores naive UTC; people read their own clock."""
    return f"{dt.replace(tzinfo=timezone.utc).astimezone():%Y-%m-%d %H:%M}"


def describe_row(row: WorkspaceInfo, chunking: Optional[str] = None) -> str:
    """The info line; ``chunking`` (from the last build or search) says how the workspace's files
    were cut and scored, chosen from their own lengths (core/retrieval/keyword_units.py)."""
    parts = []
    if row.request:
        parts.append(f"“{html.escape(row.request)}”")
    counts = f"{row.file_count:,} files"
    if row.chunk_count and row.status == "active":
        counts += f", {row.chunk_count:,} passages"
    parts.append(counts)
    if row.built_at and row.status == "active":
        parts.append(f"built {local_time(row.built_at)}")
    if chunking and row.status == "active":
        parts.append(html.escape(chunking))
    if row.status == "archived":
        parts.append("archived: reactivate to search (rebuilds from cached embeddings)")
    elif row.status in ("draft", "building") and not row.built_at:
        parts.append("build it to search and chat")
    if row.last_error:
        parts.append(f"<span style='color:#b3261e'>{html.escape(row.last_error)}</span>")
    return " · ".join(parts)


def build_time(dt: datetime, now: Optional[datetime] = None) -> str:
    """'14:02' for a build of today, else '2024-05-03 14:02' (local time)."""
    local = dt.replace(tzinfo=timezone.utc).astimezone()
    today = (now or datetime.now(timezone.utc)).astimezone().date()
    return f"{local:%H:%M}" if local.date() == today else f"{local:%Y-%m-%d %H:%M}"


def archived_for_idleness(row: WorkspaceInfo, days: int, archived_now: bool = False) -> bool:
    """Archived by the idle expiry: this session did it (``archived_now``), or it was archived
    after ``days`` without use (the core records no reason; a manual archive that late reads the same)."""
    if not row.archived or days <= 0:
        return False
    if archived_now:
        return True
    return row.archived_at is not None and row.archived_at - row.last_used_at >= timedelta(days=days)


def freshness_line(row: Optional[WorkspaceInfo], fresh: Optional[Freshness], building: bool,
                   idle_archived: bool = False, idle_days: int = 30) -> Optional[tuple[str, str, bool]]:
    """(text, tone 'warn' | 'info', show Update) for the freshness line, or None to hide it."""
    if row is None:
        return None
    if row.archived and not building:
        if not idle_archived:
            return None
        return (f"Archived after {idle_days} days unused — Reactivate brings it up to date with the index",
                "info", False)
    if building:
        if not row.built_at or row.archived:
            return None  # a first build or a reactivation: the progress bar says it all
        return (f"Updating… (answers come from the build of {build_time(row.built_at)} until it lands)",
                "info", False)
    if fresh is not None and fresh.stale:
        counts = re.sub(r"(\d) ", "\\1\u00a0", fresh.counts())  # '1 removed' never wraps apart
        return f"Out of date ({counts})", "warn", True
    return None


def freshness_tooltip(fresh: Freshness, listed: int = 20) -> str:
    """The paths behind the counts (the first ``listed`` of them)."""
    lines = ["The index changed since this workspace was built; Update reads only these files."]
    left = listed
    total = len(fresh.changed) + len(fresh.new) + len(fresh.removed)
    for title, paths in (("Changed since the build:", fresh.changed), ("New (its filter admits them now):", fresh.new),
                         ("Removed (gone, or no longer admitted):", fresh.removed)):
        if paths and left > 0:
            lines += ["", title] + [f"  {p}" for p in paths[:left]]
            left -= min(left, len(paths))
    if total > listed:
        lines.append(f"… and {total - listed:,} more")
    return "\n".join(lines)


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def describe_learning(stats, config=None) -> str:
    """One line for the Learning row from MemoryStats, in plain words: how many helpful answers
    (thumbs-up, opened results and citations) it learned from and when results change. Results
    change when a round of batches closes (core/memory/learner.py); with more than one batch per
    round the count to go is a lower bound."""
    if not (stats.evolved_keys or stats.accepted or stats.pending or stats.chunks_with_memory):
        return "Learning: nothing yet — rate answers or open results"
    helpful = _n(stats.accepted, "helpful answer")
    if stats.evolved_keys:
        text = f"Learning: {helpful} changed the ranking of {_n(stats.evolved_keys, 'passage')}"
        return text + (f"; {stats.pending:,} more count at the next update" if stats.pending else "")
    if config is None:
        from spar_desktop.core.memory import ERMConfig

        config = ERMConfig()
    to_go = max(1, config.batch_size - stats.pending)
    exact = min(config.patience + 1, config.max_batches_per_round) <= 1
    return f"Learning: {helpful} so far; {'' if exact else 'at least '}{to_go:,} more before results change"


def learning_tooltip(stats) -> str:
    lines = ["Passage keys move toward the words of questions they answered, so the next search finds them "
             "sooner. They change in batches; Reset restores the original keys exactly.",
             f"{_n(stats.chunks_with_memory, 'passage')} with memory, {_n(stats.units, 'expansion unit')}, "
             f"{_n(stats.rounds, 'round')}, {stats.ignored:,} not used"]
    if stats.last_evolved_at:
        lines.append(f"last evolved {local_time(stats.last_evolved_at)}")
    return "\n".join(lines)
