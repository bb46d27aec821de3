"""The topic proposal dialog on a real index (offscreen): propose, rename, untick, accept, discard."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from sqlalchemy import select

from spar_desktop.core.library.models import File, Tag
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.tagging.hierarchy import induce_hierarchy
from spar_desktop.core.tagging.proposal import load_proposal, proposal_path, save_proposal
from spar_desktop.ui.library.topic_proposal import open_topic_proposal
from tests.core.tagging.test_hierarchy_corpus import hand_written_corpus, write_notes
from tests.ui.conftest import UI_TIMEOUT_MS


def index_corpus(library, root: Path) -> dict[int, str]:
    texts, _ = hand_written_corpus()
    paths = write_notes(root, texts)
    Scanner(library).scan([str(root)])
    with library.session() as s:
        ids = dict(s.execute(select(File.path, File.id)).all())
    return {ids[str(paths[i])]: texts[i] for i in texts}


def topic_keys(library) -> set[str]:
    with library.session() as s:
        return set(s.scalars(select(Tag.key).where(Tag.key.like("topic:%"))))


def test_edit_accept_and_discard_a_proposal(qtbot, tmp_path, settings, library, make_window):
    proposal = induce_hierarchy(index_corpus(library, tmp_path / "notes"))
    save_proposal(settings.data_dir, proposal)
    window = make_window()
    dialog = open_topic_proposal(window)
    qtbot.waitUntil(lambda: dialog.proposal is not None, timeout=UI_TIMEOUT_MS)
    assert dialog.tree.topLevelItemCount() == len(proposal.nodes)
    first = dialog.tree.topLevelItem(0)
    assert first.text(1) == str(proposal.nodes[0].file_count) and first.text(2)
    assert first.childCount() == len(proposal.nodes[0].children)
    assert f"topics for {proposal.file_count} files" in dialog.summary.text()

    first.setText(0, "Sky   watching")  # what an edit in the tree does
    assert first.text(0) == "Sky watching" and dialog.proposal.nodes[0].name == "Sky watching"
    qtbot.waitUntil(window.runner.is_idle, timeout=UI_TIMEOUT_MS)
    assert load_proposal(settings.data_dir).nodes[0].name == "Sky watching"  # edits are kept
    first.setText(0, "")
    assert first.text(0) == "Sky watching" and "empty" in dialog.status.text()

    sub, dest = proposal.nodes[0].children[0], proposal.nodes[1]
    dialog.move_subtopic(sub.id, dest.id)  # the context menu's "Move to ▸ <topic>"
    moved = dialog.item_for(dest.id)
    assert moved.childCount() == len(dest.children) + 1 and moved.child(moved.childCount() - 1).text(0) == sub.name
    assert dialog.item_for("1").text(1) == str(proposal.nodes[0].file_count - sub.file_count)

    last = dialog.tree.topLevelItem(dialog.tree.topLevelItemCount() - 1)
    last.setCheckState(0, Qt.CheckState.Unchecked)
    assert all(last.child(k).isDisabled() for k in range(last.childCount()))
    dialog.accept_button.click()
    qtbot.waitUntil(lambda: "file assignments" in dialog.status.text(), timeout=UI_TIMEOUT_MS)
    keys = topic_keys(library)
    assert "topic:Sky watching" in keys and f"topic:{proposal.nodes[-1].name}" not in keys
    assert f"topic:{dest.name}/{sub.name}" in keys
    assert "accepted" in dialog.summary.text()
    # The window's tag tree shows the new topics.
    qtbot.waitUntil(lambda: any(t.key == "topic:Sky watching" for t in window.tag_panel.model.infos.values()),
                    timeout=UI_TIMEOUT_MS)

    dialog.discard_button.click()
    qtbot.waitUntil(lambda: dialog.proposal is None, timeout=UI_TIMEOUT_MS)
    assert not proposal_path(settings.data_dir).exists() and dialog.tree.topLevelItemCount() == 0
    assert not dialog.accept_button.isEnabled()
    assert open_topic_proposal(window) is dialog  # one dialog per window


def test_propose_builds_summaries_and_a_proposal(qtbot, tmp_path, settings, library, make_window):
    index_corpus(library, tmp_path / "notes")
    window = make_window()
    dialog = open_topic_proposal(window)
    qtbot.waitUntil(window.runner.is_idle, timeout=UI_TIMEOUT_MS)
    assert "No topic proposal yet" in dialog.summary.text() and not dialog.accept_button.isEnabled()
    dialog.propose_button.click()
    qtbot.waitUntil(lambda: dialog.proposal is not None, timeout=4 * UI_TIMEOUT_MS)
    assert "topics for 48 files" in dialog.summary.text()
    assert dialog.tree.topLevelItemCount() >= 3 and dialog.accept_button.isEnabled()
    assert proposal_path(settings.data_dir).exists()
