"""Threads leaving the app: Markdown export (with sources), and the thread part of a .sparws
file (``export_threads`` / ``import_threads``, called by workspaces.sparws).

Imported threads come from someone else's file: every field is checked and bounded, and file ids
(the exporter's) are remapped to this index through the imported workspace's file list.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any, Optional

from sqlalchemy import select

from spar_desktop.core.chat.models import AnswerMode, ChatMessage, ChatThread, MessageStatus
from spar_desktop.core.chat.prompt import Citation, Passage, page_label
from spar_desktop.core.chat.threads import ThreadStore
from spar_desktop.core.library.models import File, utcnow
from spar_desktop.core.workspaces.models import Workspace, WorkspaceFile

MAX_THREADS = 1_000
MAX_MESSAGES = 5_000
MAX_TEXT = 200_000
MAX_PASSAGES = 100


# -- Markdown ------------------------------------------------------------------------------------
def thread_markdown(store: ThreadStore, thread_id: int) -> str:
    """The thread as Markdown: every question and answer, and under each answer its sources
    (number, file, pages, full path, the quoted passage)."""
    info = store.get(thread_id)
    lines = [f"# {info.display_title}", "",
             f"Workspace: {info.workspace} · exported {utcnow():%Y-%m-%d %H:%M} UTC", ""]
    for m in store.messages(thread_id):
        when = f"{m.created_at:%Y-%m-%d %H:%M}"
        if m.role == "user":
            lines += [f"## Question ({when})", "", m.content, ""]
            continue
        how = "retrieval only" if m.mode == AnswerMode.RETRIEVAL_ONLY else (m.model or "model")
        secs = m.timings.get("total_ms")
        lines += [f"## Answer ({how}{f', {secs / 1000:.1f} s' if secs else ''})", ""]
        if m.content:
            lines += [m.content, ""]
        if m.status == MessageStatus.STOPPED:
            lines += ["*(stopped by the user)*", ""]
        if m.status == MessageStatus.ERROR:
            lines += [f"> **Error:** {m.error or 'unknown error'}", ""]
        if m.feedback is not None:
            lines += [f"Feedback: {'good' if m.feedback else 'bad'}", ""]
        bad = [c.n for c in m.citations if not c.valid]
        if bad:
            lines += [f"Citations naming no source: {', '.join(f'[{n}]' for n in bad)}", ""]
        if m.passages:
            cited = {c.n for c in m.citations if c.valid}
            lines += ["### Sources", ""]
            for p in m.passages:
                mark = "" if not cited or p.n in cited else " (not cited)"
                lines.append(f"{p.n}. **{p.name}**, {page_label(p.page_start, p.page_end)}{mark} — `{p.path}`")
                if p.excerpt:
                    lines.append(f"   > {p.excerpt}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def export_thread_markdown(store: ThreadStore, thread_id: int, out: str | Path) -> Path:
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(thread_markdown(store, thread_id), encoding="utf-8")
    os.replace(tmp, out)
    return out


# -- .sparws hooks ---------------------------------------------------------------------------------
def export_threads(library: Any, workspace_id: int) -> list[dict]:
    """Every thread of a workspace with its messages, as plain JSON for the .sparws manifest."""
    store = ThreadStore(library)
    out = []
    for t in sorted(store.list(workspace_id), key=lambda t: t.id):
        msgs = [{k: v for k, v in m.to_json().items() if k != "id"} for m in store.messages(t.id)]
        out.append({"title": t.title, "model": t.model, "created_at": t.created_at.isoformat(),
                    "updated_at": t.updated_at.isoformat(), "messages": msgs})
    return out


def _str(v: Any, limit: int = MAX_TEXT) -> Optional[str]:
    return v[:limit] if isinstance(v, str) else None


def _when(v: Any) -> datetime:
    try:
        return datetime.fromisoformat(v).replace(tzinfo=None) if isinstance(v, str) else utcnow()
    except ValueError:
        return utcnow()


def _remap(items: Any, files: dict[str, tuple[Optional[int], str]], kind: type) -> list[dict]:
    """Passages or citations (``kind``) from a manifest: parsed strictly, file ids remapped."""
    out = []
    for d in (items if isinstance(items, list) else [])[:MAX_PASSAGES]:
        if not isinstance(d, dict) or not isinstance(d.get("n"), int):
            continue
        path = d.get("path") if isinstance(d.get("path"), str) else None
        fid, ours = files.get(path, (None, path)) if path else (None, None)
        d = dict(d, file_id=fid, path=ours)
        if kind is Citation:
            d["valid"] = bool(d.get("valid")) and path is not None
        elif not path:
            continue
        try:
            out.append(kind.from_json(d).to_json())
        except (TypeError, ValueError, KeyError):
            continue
    return out


def import_threads(library: Any, workspace_name: str, threads: Any) -> int:
    """Add imported threads to workspace ``workspace_name``; returns how many were added."""
    if not isinstance(threads, list):
        return 0
    with library.session() as s:
        ws = s.scalar(select(Workspace).where(Workspace.name == workspace_name))
        if ws is None:
            return 0
        rows = s.execute(select(WorkspaceFile.path, WorkspaceFile.file_id, File.path)
                         .join(File, File.id == WorkspaceFile.file_id, isouter=True)
                         .where(WorkspaceFile.workspace_id == ws.id)).all()
        files = {theirs: (fid, ours or theirs) for theirs, fid, ours in rows}
        added = 0
        for t in threads[:MAX_THREADS]:
            if not isinstance(t, dict) or not isinstance(t.get("messages", []), list):
                continue
            thread = ChatThread(workspace_id=ws.id, title=_str(t.get("title"), 200), model=_str(t.get("model"), 200),
                                created_at=_when(t.get("created_at")), updated_at=_when(t.get("updated_at")))
            s.add(thread)
            s.flush()
            for m in t.get("messages", [])[:MAX_MESSAGES]:
                if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                    continue
                fb = m.get("feedback")
                s.add(ChatMessage(
                    thread_id=thread.id, role=m["role"], content=_str(m.get("content")) or "",
                    status=m.get("status") if m.get("status") in MessageStatus.ALL else MessageStatus.OK,
                    mode=m.get("mode") if m.get("mode") in (AnswerMode.LLM, AnswerMode.RETRIEVAL_ONLY) else None,
                    error=_str(m.get("error"), 2000), model=_str(m.get("model"), 200),
                    passages=_remap(m.get("passages"), files, Passage), citations=_remap(m.get("citations"), files, Citation),
                    timings={k: v for k, v in (m.get("timings") or {}).items()
                             if isinstance(k, str) and isinstance(v, (int, float, str))} if isinstance(m.get("timings"), dict) else {},
                    feedback=None if not isinstance(fb, bool) else (1 if fb else -1),
                    opened=[n for n in (m.get("opened") or []) if isinstance(n, int)][:MAX_PASSAGES]
                    if isinstance(m.get("opened"), list) else [],
                    created_at=_when(m.get("created_at"))))
            added += 1
    return added
