"""Build real folder trees for tests and benchmarks from the shared evaluation data."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Optional

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
DATA = SHARED / "data"


def shared_data(name: str) -> Path:
    return DATA / name


def write_newsgroups_tree(root: Path, limit: Optional[int] = None) -> int:
    """Write each newsgroups20 post to <root>/<category_path...>/<number>.txt with its date as mtime."""
    count = 0
    with open(DATA / "newsgroups20" / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            meta = rec["metadata"]
            folder = root.joinpath(*meta["category_path"])
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{rec['_id'].rsplit('/', 1)[-1]}.txt"
            path.write_text(f"Subject: {rec['title']}\n\n{rec['text']}", encoding="utf-8")
            if meta.get("date"):  # a few posts have no Date header: they keep the write time
                when = datetime.fromisoformat(meta["date"]).timestamp()
                os.utime(path, (when, when))
            count += 1
            if limit and count >= limit:
                break
    return count


def write_generated_tree(root: Path, n_files: int, files_per_dir: int = 50, seed: int = 0) -> int:
    """A synthetic share: departments/projects/years with small text-like files."""
    import random

    rng = random.Random(seed)
    depts = ["Finance", "HR", "Engineering", "Legal", "Operations", "Sales", "IT", "Research"]
    exts = [".txt", ".md", ".csv", ".json", ".html", ".txt", ".md"]
    words = "budget report policy review plan contract invoice meeting minutes design spec audit".split()
    made = 0
    d = 0
    while made < n_files:
        folder = root / depts[d % len(depts)] / f"project-{d // len(depts):03d}" / str(2015 + d % 10)
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(min(files_per_dir, n_files - made)):
            ext = exts[(made + i) % len(exts)]
            body = " ".join(rng.choice(words) for _ in range(rng.randint(20, 200)))
            (folder / f"doc-{made + i:06d}{ext}").write_text(body, encoding="utf-8")
        made += min(files_per_dir, n_files - made)
        d += 1
    return made
