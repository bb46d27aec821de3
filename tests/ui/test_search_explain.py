"""Why this result: a hit row shows its keyword and meaning shares, highlights the query's words
and says when learned keys moved it; the tooltip spells it out; the info line names the chunking."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtWidgets import QListWidget, QListWidgetItem

from spar_desktop.core.retrieval.explain import matched_spans
from spar_desktop.core.workspaces.search import WorkspaceHit

TEXT = "Gearbox oil was contaminated by water.\n\nThe   contamination came through a worn seal."
QUERY = "water contamination of the gearbox oil"


def make_hit(**kw) -> WorkspaceHit:
    base = dict(rank=2, file_id=7, path="/share/IR-gearbox.pdf", title=None, page_start=2, page_end=2, score=0.83,
                bm25_score=7.1, dense_score=0.61, text=TEXT, context=None, chunk_id="c1",
                keyword_part=0.2, meaning_part=0.63, alpha=0.8, keyword_unit="parent",
                matched=tuple(matched_spans(QUERY, TEXT)))
    base.update(kw)
    return WorkspaceHit(**base)


def test_row_highlights_matched_words_and_shows_the_score_parts():
    from spar_desktop.ui.workspaces.search_results import MARK, UNMARK, highlighted_snippet, hit_html

    hit = make_hit()
    snippet = highlighted_snippet(hit.text, hit.matched)
    for word in ("Gearbox", "oil", "water", "contamination"):
        assert f"{MARK}{word}{UNMARK}" in snippet
    assert "contaminated" in snippet and "  " not in snippet  # whitespace folded
    row = hit_html(hit, snippet)
    assert "keywords 0.20 · meaning 0.63" in row and "learned keys" not in row
    # Cut inside a highlighted word: the mark is closed, the text ends with an ellipsis.
    cut = highlighted_snippet(hit.text, hit.matched, limit=10)
    assert cut.endswith(" …") and cut.count(MARK) == cut.count(UNMARK)


def test_evolved_hits_say_how_far_learned_keys_moved_them():
    from spar_desktop.ui.workspaces.search_results import hit_html, hit_tooltip, highlighted_snippet

    up = make_hit(evolved=True, rank_without_evolution=5)
    assert "learned keys: ↑3" in hit_html(up, highlighted_snippet(up.text, up.matched))
    tip = hit_tooltip(up)
    assert "score 0.83 = keywords 0.20 (BM25 on its section) + meaning 0.63 (dense, weight 0.80)" in tip
    assert "matched words: Gearbox, oil, contaminated, water, contamination" in tip
    assert "learned keys moved it up 3 places" in tip
    down = make_hit(rank=4, evolved=True, rank_without_evolution=3)
    assert "moved it down 1 place" in hit_tooltip(down)
    plain = make_hit(keyword_part=None, meaning_part=None, alpha=None, matched=())
    assert "matched words: none (found by meaning)" in hit_tooltip(plain)
    assert "keywords" not in hit_html(plain, "x")


def test_delegate_draws_explained_hits(qtbot):
    from spar_desktop.ui.workspaces.search_results import HIT_ROLE, HitDelegate

    view = QListWidget()
    qtbot.addWidget(view)
    view.setItemDelegate(HitDelegate(view))
    for hit in (make_hit(), make_hit(evolved=True, rank_without_evolution=9)):
        item = QListWidgetItem()
        item.setData(HIT_ROLE, hit)
        view.addItem(item)
    view.resize(400, 300)
    view.show()
    qtbot.waitExposed(view)
    heights = [view.itemDelegate().sizeHint(view.viewOptions() if hasattr(view, "viewOptions") else _option(view),
                                            view.model().index(i, 0)).height() for i in range(2)]
    assert all(h > 40 for h in heights)


def _option(view):
    from PySide6.QtWidgets import QStyleOptionViewItem

    option = QStyleOptionViewItem()
    option.initFrom(view)
    return option


def test_info_line_names_the_chunking_choice():
    from spar_desktop.core.workspaces.manager import WorkspaceInfo
    from spar_desktop.core.workspaces.selection import WorkspaceFilter
    from spar_desktop.ui.workspaces.panel_text import describe_row

    row = WorkspaceInfo(1, "Incidents", "active", "ws-incidents-1", WorkspaceFilter(request="incident reports"),
                        datetime(2026, 1, 1), datetime(2026, 1, 2), datetime(2026, 1, 2), None, 2, 40, None, None)
    text = describe_row(row, "short documents (90% fit in one section): keywords scored on whole documents, "
                             "meaning on 200-token passages")
    assert "keywords scored on whole documents" in text
    assert "keywords" not in describe_row(row)
