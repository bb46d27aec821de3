"""A metadata index of N files written straight into SQLite, for the app-at-scale benchmarks.

    python benchmarks/big_index.py DATA_DIR --files 1000000

Scanning a real 1,000,000-file share takes minutes and is the scan benchmark's business; the app
benchmarks only need the index such a scan leaves. So the schema is made by ``Library.open`` (the
project's migrations) and the rows are inserted with executemany, shaped as the scanner writes
them: a realistic tree (division / department / project / year, ~10 files a folder), one folder
tag (the deepest) and one month tag per file with their parent chains as tag edges, 5% of the
files "unsupported" and 0.5% "error" (the Issues dock's rows). Measured under a load average of
~10 on 2 cores: 17 s for 100,000 files, 383 s for 1,000,000.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

# SPAR_TREE: the source tree whose schema the index gets (app_at_scale.py's "before" tree).
sys.path.insert(0, os.environ.get("SPAR_TREE", str(Path(__file__).resolve().parents[1])))

FILES_PER_FOLDER = 10
FORMATS = ("pdf", "docx", "xlsx", "md", "txt", "pptx", "msg", "csv")


def _dt(d: datetime) -> str:
    return d.strftime("%Y-%m-%d %H:%M:%S.%f")  # SQLAlchemy's SQLite DateTime text


def folder_tree(files: int) -> list[str]:
    """Leaf folders division/department/project/year, about FILES_PER_FOLDER files each."""
    leaves = max(1, files // FILES_PER_FOLDER)
    projects = max(1, leaves // (8 * 6 * 5))
    out = []
    for d in range(8):
        for e in range(6):
            for p in range(projects):
                for y in range(5):
                    out.append(f"Division-{d}/Dept-{d}{e}/project-{p:04d}/{2015 + y}")
    return out


def build(data_dir: Path, files: int) -> dict:
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library

    settings = replace(load_settings(data_dir), chroma_process=False)
    lib = Library.open(settings)  # the schema, as the app makes it
    db = lib.engine.url.database
    lib.close()
    t0 = time.perf_counter()
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=OFF")
    root = str(data_dir.parent / "share")
    now = _dt(datetime(2026, 1, 1))
    con.execute("INSERT INTO folders (id, path, ignore_patterns, watched, added_at, last_scan_at, last_scan_complete)"
                " VALUES (1, ?, '[]', 1, ?, ?, 1)", (root, now, now))
    tag_ids: dict[str, int] = {}
    tags: list[tuple] = []
    edges: list[tuple[int, int]] = []

    def chain(specs: list[tuple[str, str]], source: str) -> int:
        parent = None
        for key, label in specs:
            tid = tag_ids.get(key)
            if tid is None:
                tid = tag_ids[key] = len(tag_ids) + 1
                tags.append((tid, key, label, source, now))
                if parent is not None:
                    edges.append((parent, tid))
            parent = tid
        assert parent is not None
        return parent

    from spar_desktop.core.library.tags import date_tag_specs, path_tag_specs

    folders = folder_tree(files)
    rng = random.Random(29)
    file_rows, tag_rows = [], []
    start = datetime(2010, 1, 1)

    def flush() -> None:
        con.executemany("INSERT INTO files (id, path, folder_id, rel_path, name, size, mtime_ns, content_version, format,"
                        " title, author, modified_at, page_count, status, error, first_seen_at)"
                        " VALUES (?,?,1,?,?,?,0,1,?,?,?,?,?,?,?,?)", file_rows)
        con.executemany("INSERT INTO file_tags (file_id, tag_id, source, score, confirmed) VALUES (?,?,?,1.0,1)", tag_rows)
        file_rows.clear()
        tag_rows.clear()

    for i in range(1, files + 1):
        folder = folders[(i - 1) % len(folders)]
        fmt = FORMATS[i % len(FORMATS)]
        name = f"{'Report' if i % 3 else 'minutes'}-{i:07d}.{fmt}"
        rel = f"{folder}/{name}"
        when = start + timedelta(minutes=rng.randrange(15 * 365 * 24 * 60))
        roll = rng.random()
        status, error = ("unsupported", f".{fmt}: no text extraction yet") if roll < 0.05 else (
            ("error", "damaged file") if roll < 0.055 else ("ok", None))
        file_rows.append((i, f"{root}/{rel}", rel, name, rng.randrange(1, 5_000_000), fmt,
                          f"Title {i % 997}" if i % 4 else None, f"Author {i % 89}" if i % 5 else None,
                          _dt(when), (i % 40) or None, status, error, now))
        tag_rows.append((i, chain(path_tag_specs(folder), "path"), "path"))
        if status != "error":
            tag_rows.append((i, chain(date_tag_specs(when), "date"), "date"))
        if len(file_rows) >= 20_000:
            flush()
    flush()
    con.executemany("INSERT INTO tags (id, key, value, source, created_at) VALUES (?,?,?,?,?)", tags)
    con.executemany("INSERT INTO tag_edges (parent_id, child_id) VALUES (?,?)", edges)
    con.commit()
    con.close()
    counted_s = _count_as_a_scan_does(settings)
    return {"counted_s": counted_s, "files": files, "folders": len(folders), "tags": len(tags), "insert_s": round(time.perf_counter() - t0, 1),
            "database": db}


def _count_as_a_scan_does(settings) -> float | None:
    """The tag tree's stored counts, as a scan leaves them (it counts at its end). The rows above
    went around the engine's write watch, so the count store would otherwise call its empty rows
    fresh and the tree would show no tag. A tree from before the count store has nothing to do."""
    try:
        from spar_desktop.core.library import count_store
    except ImportError:
        return None
    from spar_desktop.core.library.database import Library

    t0 = time.perf_counter()
    lib = Library.open(settings)
    try:
        with lib.session() as s:
            s.connection().info[count_store.TOUCHED] = True  # written behind its back: count everything
            count_store.refresh(s)
    finally:
        lib.close()
    return round(time.perf_counter() - t0, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--files", type=int, default=100_000)
    args = ap.parse_args()
    print(json.dumps(build(args.data_dir, args.files)))


if __name__ == "__main__":
    main()
