"""Ranking that does not wait for the background summaries job (issue 29): a request computes the
summaries of its best candidates on demand, bounded and kept, and then admits what the
precomputed summaries would; the funnel says when files were ranked by their tags alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy
from spar_desktop.core.tagging.summaries import SummaryStore, summarize_files
from spar_desktop.core.workspaces import ranking
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.selection import admitted_files, explain

# Every file is an inspection: the 'inspection' tag ties them all, so which of them make the
# budget is decided by how like the request their text is (the summaries), not by path.
FILES = {
    "a-cake.md": (["Inspection"], "Inspection of the bakery: a lemon cake recipe with sugar, butter and eggs."),
    "b-garden.md": (["Inspection"], "Inspection of the garden: roses, tulips and the hedge were trimmed."),
    "c-bearing.md": (["Inspection"], "Inspection found metal particles from worn gearbox bearings in the oil."),
    "d-teeth.md": (["Inspection"], "Inspection of the gearbox teeth: pitting on the planetary stage gears."),
    "e-office.md": (["Inspection"], "Inspection of the office printers and the coffee machine."),
}
REQUEST = "inspections of worn gearbox bearings and gear teeth"


def _index(base: Path, encoder) -> tuple[Library, Workspaces]:
    share = base / "share"
    share.mkdir(parents=True)
    for name, (_, text) in FILES.items():
        (share / name).write_text(text, encoding="utf-8")
    tax = base / "tax.json"
    tax.write_text(json.dumps([{"name": "Inspection"}]), encoding="utf-8")
    assign = base / "assign.csv"
    assign.write_text("".join(f"{n},{','.join(t)}\n" for n, (t, _) in FILES.items()), encoding="utf-8")
    settings = load_settings(base / "data")
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        import_taxonomy(s, tax)
        assign_from_csv(s, assign, str(share))
    return lib, Workspaces(lib, Engine(settings, get_encoder("cpu")))


@pytest.fixture(scope="module")
def two_indexes(tmp_path_factory):
    """The same share indexed twice: one as a CLI user leaves it (no summaries), one after the
    app's background job summarised every file."""
    encoder = get_encoder("cpu")
    fresh = _index(tmp_path_factory.mktemp("on-demand"), encoder)
    done = _index(tmp_path_factory.mktemp("precomputed"), encoder)
    summarize_files(done[0], done[0].settings, done[1].engine.encoder)
    yield fresh, done
    fresh[0].close()
    done[0].close()


def names(lib: Library, flt) -> list[str]:
    return sorted(Path(p).name for _, p, _ in admitted_files(lib, flt))


def test_on_demand_summaries_admit_what_precomputed_summaries_admit(two_indexes):
    (lib, mgr), (done_lib, done_mgr) = two_indexes
    model = mgr.engine.encoder.model_id
    assert SummaryStore(lib).count(model) == 0  # indexed and tagged, nothing else
    flt = mgr.filter_for(REQUEST).with_budget(2)
    # Encoded although the index has no summary yet: its tag's candidates will get them.
    assert flt.ranks and flt.request_vector and flt.vector_model == model
    before = explain(lib, flt)
    assert before.ranking.without_summary == before.ranking.candidates == len(FILES)
    assert before.ranking.label().endswith("; ranked by tags alone, without file summaries")
    tags_only = names(lib, flt)
    assert tags_only == ["a-cake.md", "b-garden.md"]  # a tie on tags: broken by path

    info, exp = mgr.create("gearbox", filter=flt)  # computes the candidates' summaries, then admits
    assert SummaryStore(lib).count(model) == len(FILES)  # kept for the next request
    reference = done_mgr.filter_for(REQUEST).with_budget(2)
    assert names(lib, mgr.current_filter("gearbox")) == names(done_lib, reference) == ["c-bearing.md", "d-teeth.md"]
    assert exp.ranking.without_summary == 0 and "tags alone" not in exp.ranking.label()
    assert exp.to_json()["ranking"]["without_summary"] == 0
    # A second request finds them stored: nothing is computed again.
    again = mgr.summarise_candidates(mgr.filter_for(REQUEST))
    assert again is not None and again.summarized == 0


def test_on_demand_work_is_bounded_and_the_funnel_names_what_it_left(tmp_path):
    lib, mgr = _index(tmp_path, get_encoder("cpu"))
    flt = mgr.filter_for(REQUEST).with_budget(2)
    # The best candidates by their tags only (here a tie, so by path), never the whole index.
    report = ranking.summarise_candidates(lib, lib.settings, mgr.engine.encoder, flt, limit=3)
    assert report.summarized == 3 and SummaryStore(lib).count(mgr.engine.encoder.model_id) == 3
    exp = explain(lib, flt)
    assert exp.ranking.without_summary == len(FILES) - 3
    funnel = "\n".join(exp.lines())
    assert f"; {len(FILES) - 3} ranked by tags alone, without a file summary" in funnel
    assert "2 files, 40% of the index" in funnel  # the closing line scripts read
    lib.close()


def test_no_summary_is_computed_when_it_cannot_change_what_is_admitted(tmp_path):
    """Likeness only adds to a tag score: when every candidate fits the budget, or no file has a
    summary and the budget takes the best ``limit`` by tags anyway, the request computes nothing
    (at 100k files this was 6 s of CPU a request) and admits the same files."""
    lib, mgr = _index(tmp_path, get_encoder("cpu"))
    model = mgr.engine.encoder.model_id
    everything = mgr.filter_for(REQUEST).with_budget(len(FILES))
    assert ranking.summarise_candidates(lib, lib.settings, mgr.engine.encoder, everything).summarized == 0
    assert names(lib, everything) == sorted(FILES)
    wide = mgr.filter_for(REQUEST).with_budget(2)
    assert ranking.summarise_candidates(lib, lib.settings, mgr.engine.encoder, wide, limit=2).summarized == 0
    tags_only = names(lib, wide)
    summarize_files(lib, lib.settings, mgr.engine.encoder, [fid for fid, _, _ in admitted_files(lib, wide)])
    assert SummaryStore(lib).count(model) == 2 and names(lib, wide) == tags_only  # the same two files
    lib.close()


def test_a_preview_admits_what_the_workspace_made_from_it_admits(tmp_path):
    """The app previews a request, the user edits the budget, then creates from that filter: the
    preview must compute the same on-demand summaries first, or it lists files (here the two tied
    on tags, cake and garden) that the workspace made from it will not hold."""
    lib, mgr = _index(tmp_path, get_encoder("cpu"))
    flt = mgr.filter_for(REQUEST).with_budget(2)
    previewed = mgr.explain_filter(flt)
    assert previewed.ranking.without_summary == 0 and "tags alone" not in previewed.ranking.label()
    shown = names(lib, flt)
    assert shown == ["c-bearing.md", "d-teeth.md"]
    mgr.create("from-preview", filter=flt)
    assert names(lib, mgr.current_filter("from-preview")) == shown
    assert mgr.preview(REQUEST).admitted == explain(lib, mgr.filter_for(REQUEST)).admitted
    lib.close()
