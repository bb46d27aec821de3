"""Duplicates cost nothing twice: a share where a share of the files are copies (sync conflicts,
"copy of" names, a zipped copy of a folder) embeds each content once.

Generates N distinct notes, then copies 30% of the share's files (loose copies in other folders
and a zip of one folder), indexes it, builds one workspace over everything from a cold cache, and
compares the chunks embedded with the naive way (every file embedded on its own: the sum of the
chunks of every admitted file). Also reports the vectors in the workspace collection and the
duplicate groups `spar files --duplicates` lists. Prints JSON; goal: embedded ≤ 71% of naive.
Usage: python benchmarks/duplicates.py [--files 400] [--copy-share 0.3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, os.environ.get("SPAR_SRC") or str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.library.database import Library  # noqa: E402
from spar_desktop.core.library.queries import duplicate_groups  # noqa: E402
from spar_desktop.core.library.scanner import Scanner  # noqa: E402
from spar_desktop.core.workspaces.manager import Workspaces  # noqa: E402
from spar_desktop.core.workspaces.selection import WorkspaceFilter  # noqa: E402

WORDS = ("turbine gearbox bearing oil blade inspection budget contract policy safety height harness "
         "maintenance outage forecast invoice board minutes project design review audit").split()


def write_share(root: Path, n: int, copy_share: float) -> int:
    """n distinct notes plus copies making ``copy_share`` of all files; returns the copy count."""
    rng = random.Random(11)
    originals = []
    for i in range(n):
        folder = root / f"project-{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(150, 500)))
        path = folder / f"note-{i:05d}.md"
        path.write_text(f"# Note {i}\n\n{text}", encoding="utf-8")
        originals.append(path)
    copies = round(n * copy_share / (1 - copy_share))  # copies / (n + copies) = copy_share
    zipped = [p for p in originals if p.parent.name == "project-00"][: copies // 3]
    with zipfile.ZipFile(root / "project-00-backup.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for p in zipped:
            zf.write(p, f"project-00/{p.name}")
    loose = rng.sample([p for p in originals if p not in zipped], copies - len(zipped))
    sync = root / "Sync conflicts"
    sync.mkdir()
    for p in loose:
        shutil.copyfile(p, sync / f"{p.stem} (conflicted copy).md")
    return copies


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=400, help="distinct documents")
    ap.add_argument("--copy-share", type=float, default=0.3, help="share of all files that are copies")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-dup-bench-"))
    try:
        share = work / "share"
        copies = write_share(share, args.files, args.copy_share)
        lib = Library.open(load_settings(work / "data"))
        [scan] = Scanner(lib).scan([str(share)])
        mgr = Workspaces(lib)
        mgr.engine.encoder  # load the model outside the timing
        mgr.create("everything", filter=WorkspaceFilter(all_files=True))
        t0 = time.perf_counter()
        report = mgr.build("everything")
        seconds = time.perf_counter() - t0
        per_hash = {}  # chunks of each distinct content, from the shared cache
        files = mgr.files("everything")
        for f in files:
            if f.state == "ready":
                per_hash[f.content_hash] = f.chunks
        naive = sum(per_hash.get(f.content_hash, 0) for f in files if f.state in ("ready", "duplicate"))
        with lib.session() as s:
            groups = duplicate_groups(s)
        out = {
            "benchmark": "duplicates", "distinct_documents": args.files, "copies": copies,
            "files_admitted": report.admitted, "copy_share": round(copies / report.admitted, 3),
            "children_from_zip": scan.children, "duplicate_groups": len(groups),
            "collapsed_in_workspace": report.duplicates,
            "chunks_embedded": report.embedded_chunks, "chunks_naive": naive,
            "embedded_over_naive": round(report.embedded_chunks / naive, 3) if naive else None,
            "vectors_in_collection": report.chunks, "build_s": round(seconds, 2), "goal": "embedded_over_naive <= 0.71",
        }
        print(json.dumps(out, indent=1))
        results = Path(__file__).resolve().parent / "results" / "duplicates.json"
        results.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        lib.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
