"""How `spar ws` prints a build report, search hits and a workspace not built yet (names and paths
through ``printable``)."""

from __future__ import annotations

import json
import sys

from spar_desktop.commands.terminal import printable
from spar_desktop.core.documents.pages import page_span_label

NOT_BUILT = "not built yet"


def print_build_report(report) -> None:
    print(printable(f"'{report.name}': {report.ready}/{report.admitted} files ready, {report.chunks} chunks "
                    f"({report.embedded_chunks} newly embedded, {report.reused_documents} documents from cache; "
                    f"+{report.added_vectors}/-{report.removed_vectors}/~{report.rewritten_vectors} vectors) "
                    f"in {report.seconds:.1f}s"))
    if report.changed_files or report.new_files or report.removed_files:
        print(printable(f"  updated: {report.changed_files} changed, {report.new_files} new, "
                        f"{report.removed_files} removed since the last build; {report.read_documents} "
                        f"document(s) read"))
    for note in report.notes:
        print(f"  note: {printable(note)}")
    for path, state, message in report.problems[:50]:
        print(printable(f"  ! {path}: {state}: {message}"))
    if len(report.problems) > 50:
        print(printable(f"  ... and {len(report.problems) - 50} more (spar ws files \"{report.name}\")"))


def print_hits(res) -> None:
    if not res.hits:
        print(printable(res.message or "no results"))
        return
    for h in res.hits:
        pages = page_span_label(h.path, h.page_start, h.page_end)
        gone = ("  [file no longer on disk]" if h.file_missing else
                "  [file changed since the build: text may be out of date]" if h.file_changed else "")
        print(printable(f"[{h.rank}] {h.score:.3f}  {h.path}  ({pages}){gone}"))
        snippet = " ".join(h.text.split())
        print(f"     {printable(snippet[:300])}{'…' if len(snippet) > 300 else ''}")
        if h.also_at:
            more = f" (+{len(h.also_at) - 3} more)" if len(h.also_at) > 3 else ""
            print(printable(f"     also at: {'; '.join(h.also_at[:3])}{more}"))
    print(f"{len(res.hits)} hits in {res.latency_ms:.0f} ms", file=sys.stderr)


def print_unbuilt_files(mgr, info, as_json: bool) -> int:
    """Before the first build a workspace has no file rows yet: show what its filter admits."""
    from spar_desktop.core.workspaces.selection import admitted_files

    admitted = admitted_files(mgr.library, mgr.current_filter(info.name))
    if as_json:
        print(json.dumps([{"path": path, "state": NOT_BUILT, "error": None, "chunks": 0} for _, path, _ in admitted],
                         indent=1))
        return 0
    for _, path, _ in admitted:
        print(f"{NOT_BUILT}  {printable(path)}")
    hint = f'build it to search and ask: spar ws build "{info.name}"'
    print(printable(f"{len(admitted)} files admitted, {hint}" if admitted else
                    f"no file admitted (spar ws explain \"{info.name}\" says why)"), file=sys.stderr)
    return 0
