"""Summaries: one short text and vector per file, resumable, redone when a file changes."""

from __future__ import annotations

import numpy as np
import pytest

from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.progress import CancelToken, Cancelled
from spar_desktop.core.tagging import summaries
from spar_desktop.core.tagging.summaries import SummaryStore, summarize_files, summary_similarity, summary_text
from tests.core.tagging.conftest import NOTES, file_id


def test_summary_text_is_the_title_and_the_opening():
    text = summary_text("Annual report", "word " * 1000)
    assert text.startswith("Annual report. word word")
    assert len(text.split()) < 160  # ~200 tokens, not the whole document
    assert summary_text("Budget", "# Budget\n\nThe capital budget.") == "# Budget The capital budget."
    assert summary_text(None, "") == ""


def test_every_readable_file_gets_one_normalised_vector(env, encoder):
    lib, settings, share = env
    report = summarize_files(lib, settings, encoder)
    assert (report.summarized, report.unreadable) == (len(NOTES), 0)
    store = SummaryStore(lib)
    ids, vectors = store.matrix(encoder.model_id)
    assert len(ids) == len(NOTES) == store.count(encoder.model_id)
    assert vectors.dtype.name == "float32" and vectors.shape[1] == encoder.dim
    assert abs(float((vectors ** 2).sum(axis=1).mean()) - 1.0) < 1e-4
    texts = store.texts([file_id(lib, share / "Finance/budget.md")])
    assert list(texts.values())[0].startswith("# Budget The capital budget")
    assert store.matrix("another-model")[0].size == 0  # another encoder's vectors never mix in


def test_a_cancelled_run_goes_on_where_it_stopped(env, encoder, monkeypatch):
    lib, settings, _ = env
    monkeypatch.setattr(summaries, "BATCH_FILES", 3)
    cancel = CancelToken()

    def stop_after_first_batch(p):
        if p.done >= 3:
            cancel.cancel()

    with pytest.raises(Cancelled):
        summarize_files(lib, settings, encoder, progress=stop_after_first_batch, cancel=cancel)
    assert SummaryStore(lib).count(encoder.model_id) == 3  # the first batch was committed
    again = summarize_files(lib, settings, encoder)
    assert (again.summarized, again.up_to_date) == (len(NOTES) - 3, 3)


def test_a_changed_file_is_summarised_again_and_a_removed_one_drops_out(env, encoder):
    lib, settings, share = env
    summarize_files(lib, settings, encoder)
    before_ids, before = SummaryStore(lib).matrix(encoder.model_id)  # read once, then kept while current
    (share / "Finance/budget.md").write_text("# Staff party\n\nThe summer party is on the beach.", encoding="utf-8")
    (share / "Finance/audit.md").unlink()
    Scanner(lib).scan([str(share)])
    store = SummaryStore(lib)
    budget = file_id(lib, share / "Finance/budget.md")
    assert budget not in store.texts()  # stale until summarised again: never served as current
    report = summarize_files(lib, settings, encoder)
    assert report.summarized == 1
    assert store.texts([budget])[budget].startswith("# Staff party")
    assert file_id(lib, share / "Finance/audit.md") not in store.texts()
    # The matrix every workspace preview ranks by follows the change (not the copy read before it).
    ids, vectors = store.matrix(encoder.model_id)
    assert len(ids) == len(before_ids) - 1 and file_id(lib, share / "Finance/audit.md") not in ids.tolist()
    row = ids.tolist().index(budget)
    assert float(vectors[row] @ before[before_ids.tolist().index(budget)]) < 0.99


def test_files_without_text_are_counted_and_tried_again_next_time(env, encoder):
    import pymupdf

    lib, settings, share = env
    doc = pymupdf.open()
    doc.new_page().draw_rect(pymupdf.Rect(50, 50, 200, 200), fill=(0, 0, 0))  # a "scan": no text layer
    doc.save(share / "scan.pdf")
    Scanner(lib).scan([str(share)])
    report = summarize_files(lib, settings, encoder)
    assert (report.summarized, report.unreadable) == (len(NOTES), 1)  # OCR is a build's job, not this one's
    assert report.errors[0][0].endswith("scan.pdf")
    assert file_id(lib, share / "scan.pdf") not in SummaryStore(lib).texts()
    assert summarize_files(lib, settings, encoder).unreadable == 1


def query(encoder, text: str) -> np.ndarray:
    return np.asarray(encoder.encode_query(text), dtype=np.float32)


def test_summary_similarity_ranks_the_files_a_request_is_about(env, encoder):
    lib, settings, share = env
    summarize_files(lib, settings, encoder)
    sims = summary_similarity(lib, encoder.model_id, query(encoder, "wind turbine gearbox bearing damage"))
    assert len(sims) == len(NOTES)
    best = max(sims, key=sims.get)
    assert best == file_id(lib, share / "Turbines/gearbox.md")
    only = summary_similarity(lib, encoder.model_id, query(encoder, "payroll"), [file_id(lib, share / "Finance/payroll.md")])
    assert list(only) == [file_id(lib, share / "Finance/payroll.md")]
    assert summary_similarity(lib, "another-model", query(encoder, "payroll")) == {}
