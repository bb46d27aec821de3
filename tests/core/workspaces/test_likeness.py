"""Summary likeness streamed in batches (issue 29): ranking keeps a cosine per file, never the
vectors, and builds rows only for summary-only files that can make the budget. What it admits
and counts must be what the reference (every pool file read into Python) admits and counts,
including ties at the budget's edge, which only paths decide (duplicate files share a summary)."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileSummary
from spar_desktop.core.library.queries import FileFilter
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.workspaces import likeness, ranking

from .reference_paths import reference_rank

MODEL = "test-model"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    base = tmp_path_factory.mktemp("likeness")
    share = base / "share"
    share.mkdir()
    for i in range(40):
        (share / f"note-{i:02d}.txt").write_text(f"note {i}", encoding="utf-8")
    library = Library.open(load_settings(base / "data"))
    Scanner(library).scan([str(share)])
    rng = np.random.default_rng(5)
    query = query_vector()
    with library.session() as s:
        rows = s.execute(select(File.id, File.content_hash).order_by(File.path.desc())).all()
        for n, (fid, h) in enumerate(rows):
            if n < 12:  # twelve copies of one document: one summary, one cosine, a tie only paths break
                vec = query + 0.6 * np.ones(8, dtype=np.float32)
            else:
                vec = rng.normal(size=8).astype(np.float32) + rng.uniform(0, 2.5) * query
            vec = (vec / np.linalg.norm(vec)).astype(np.float32)
            s.add(FileSummary(file_id=fid, content_hash=h, model_id=MODEL, text="t", vector=vec.tobytes()))
    yield library
    library.close()


def query_vector() -> np.ndarray:
    q = np.random.default_rng(2).normal(size=8).astype(np.float32)
    return q / np.linalg.norm(q)


@pytest.mark.parametrize("budget", [0, 1, 5, 13, 25, 100])
@pytest.mark.parametrize("batch", [3, 20_000])
def test_streamed_ranking_admits_and_counts_what_the_reference_does(lib, monkeypatch, budget, batch):
    monkeypatch.setattr(likeness, "STREAM_ROWS", batch)
    got = ranking.rank(lib, FileFilter(), [], budget, query_vector(), MODEL)
    want = reference_rank(lib, FileFilter(), [], budget, query_vector(), MODEL)
    assert got == want
    assert got.candidates > budget or budget >= 25  # the budget cuts through the scored files


def test_tied_copies_at_the_budget_edge_are_admitted_by_path(lib):
    everything = ranking.rank(lib, FileFilter(), [], 100, query_vector(), MODEL).admitted
    copies = [f for f in everything if sum(g.similarity == f.similarity for g in everything) == 12]
    assert len(copies) == 12
    first = everything.index(copies[0])
    got = ranking.rank(lib, FileFilter(), [], first + 3, query_vector(), MODEL)
    assert got.admitted[first:] == tuple(sorted(copies, key=lambda f: f.path)[:3])  # the edge: by path


def test_only_files_that_can_make_the_budget_get_rows(lib):
    like = likeness.pool_likeness(lib, query_vector(), MODEL, FileFilter(), narrows=False)
    assert len(like) == 40
    none = np.zeros(0, dtype=np.int64)
    scored, ids, _ = like.top_alone(none, ranking._likeness_scores, 3)
    assert len(ids) == 3 < scored  # the three best, not every file with a summary like the request
    everything = ranking.rank(lib, FileFilter(), [], 100, query_vector(), MODEL).admitted
    first_copy = next(i for i, f in enumerate(everything) if sum(g.similarity == f.similarity for g in everything) == 12)
    _, ids, _ = like.top_alone(none, ranking._likeness_scores, first_copy + 1)
    assert len(ids) == first_copy + 12  # a budget ending inside the twelve copies keeps all twelve
    assert likeness.pool_likeness(lib, query_vector(), "another-model", FileFilter(), narrows=False).ids.size == 0
