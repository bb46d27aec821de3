"""Summaries, suggestions and the review queue on a real PostgreSQL server (the team set-up)."""

from __future__ import annotations


import numpy as np

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.tagging import review
from spar_desktop.core.tagging.job import run_tagging
from spar_desktop.core.tagging.summaries import SummaryStore, summary_similarity
from tests.core.tagging.conftest import NOTES, RIGHT_FOLDER, file_id, write_share
from tests.support.servers import fresh_database


def test_the_whole_loop_on_postgres(pg_url, tmp_path, encoder):
    share = write_share(tmp_path / "share")
    settings = load_settings(tmp_path / "data", database_url=fresh_database(pg_url))
    lib = Library.open(settings)
    try:
        Scanner(lib).scan([str(share)])
        report = run_tagging(lib, settings, encoder)
        assert report.summaries.summarized == len(NOTES) == SummaryStore(lib).count(encoder.model_id)
        sims = summary_similarity(lib, encoder.model_id, np.asarray(encoder.encode_query("gearbox oil"), dtype=np.float32))
        assert max(sims, key=sims.get) in {file_id(lib, share / "oil-change.md"), file_id(lib, share / "Turbines/gearbox.md")}
        oil = review.pending(lib, file_id=file_id(lib, share / "oil-change.md"))[0]
        spending = review.pending(lib, file_id=file_id(lib, share / "spending.md"))[0]
        assert (oil.tag_value, spending.tag_value) == (RIGHT_FOLDER["oil-change.md"], RIGHT_FOLDER["spending.md"])
        assert review.accept(lib, [(oil.file_id, oil.tag_id)]) == 1
        assert review.reject(lib, [(spending.file_id, spending.tag_id)]) == 1
        run_tagging(lib, settings, encoder, redo=True)
        assert not review.pending(lib, file_id=spending.file_id, tag_id=spending.tag_id)
        assert review.pending_counts(lib).get(oil.tag_id, 0) == 0
    finally:
        lib.close()
