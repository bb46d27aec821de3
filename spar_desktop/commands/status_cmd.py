"""`spar status`: where the data lives and what the index holds."""

from __future__ import annotations

import argparse
import json

from spar_desktop.commands.common import open_library
from spar_desktop.core.config import runtime_note


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("status", help="show the data dir, database and index counts")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spar_desktop.core.library.overview import scan_issues
    from spar_desktop.core.library.queries import library_stats

    library = open_library(args)
    with library.session() as s:
        stats = library_stats(s)
        issues = scan_issues(s, limit=20)
    settings = library.settings
    stats["data_dir"] = str(settings.data_dir)
    stats["database"] = settings.resolved_database_url if settings.database_url is None else "(configured URL)"
    stats["encoder"] = {"runtime": settings.embed_runtime, "origin": settings.embed_runtime_origin,
                        "note": runtime_note(settings)}
    if args.json:
        print(json.dumps(stats, indent=1, default=str))
        return 0
    print(f"data dir:  {stats['data_dir']}")
    print(f"database:  {stats['database']}")
    print(f"encoder:   {stats['encoder']['note']}")
    print(f"files:     {stats['files']} ({stats['total_bytes'] / 1e6:.1f} MB)")
    for status, n in sorted(stats["by_status"].items()):
        print(f"  {status:<12}{n}")
    print("formats:   " + ", ".join(f"{k} {v}" for k, v in sorted(stats["by_format"].items(), key=lambda kv: -kv[1])))
    print(f"tags:      {stats['tags']}")
    print("folders:")
    for r in stats["roots"]:
        state = "complete" if r["complete"] else "INCOMPLETE (run spar index to resume)"
        print(f"  {r['path']}  last scan {r['last_scan_at'] or 'never'}, {state}")
    for path, message in issues:
        print(f"  ! {path}: {message}")
    return 0
