"""Tag suggestions in the app: the job runs after a scan, the tag panel counts what waits, the
review dialog accepts, rejects and bulk-accepts, and the job can be cancelled like any task."""

from __future__ import annotations

from pathlib import Path

from spar_desktop.ui.library.tag_review import JOB_KEY, TagSuggestions
from tests.core.tagging.conftest import RIGHT_FOLDER, write_share
from tests.ui.conftest import UI_TIMEOUT_MS


def suggestions(window) -> TagSuggestions:
    wiring = getattr(window, "tag_suggestions", None) or TagSuggestions(window)
    window.controller.auto_tagging = True
    return wiring


def index_and_suggest(qtbot, window, tmp_path: Path) -> Path:
    share = write_share(tmp_path / "share")
    window.controller.index_paths([str(share)])
    qtbot.waitUntil(lambda: bool(window.tag_panel.pending) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS * 4)
    return share


def row_of(dialog, name: str) -> int:
    return next(r for r, s in enumerate(dialog.rows) if Path(s.path).name == name)


def test_a_scan_is_followed_by_suggestions_to_review(qtbot, window, tmp_path):
    suggestions(window)
    index_and_suggest(qtbot, window, tmp_path)
    panel = window.tag_panel
    assert panel.suggested_label.text().startswith("Suggested: ")
    assert panel.review_button.isEnabled()
    assert sum(panel.pending.values()) >= len(RIGHT_FOLDER)


def test_review_accept_reject_and_bulk_accept(qtbot, window, tmp_path):
    wiring = suggestions(window)
    index_and_suggest(qtbot, window, tmp_path)
    dialog = wiring.review()
    qtbot.waitUntil(lambda: len(dialog.rows) > 0 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    total = len(dialog.rows)
    assert dialog.tag_box.itemText(0) == f"All suggested tags ({total})"
    oil = dialog.rows[row_of(dialog, "oil-change.md")]
    assert oil.tag_value == "Turbines"

    dialog.table.selectRow(row_of(dialog, "oil-change.md"))
    assert dialog.accept_button.isEnabled()
    dialog.accept_button.click()
    qtbot.waitUntil(lambda: len(dialog.rows) == total - 1 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert dialog.status.text().startswith("1 ") or "waiting" in dialog.status.text()

    dialog.table.selectRow(row_of(dialog, "spending.md"))
    dialog.reject_button.click()
    qtbot.waitUntil(lambda: len(dialog.rows) == total - 2 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert all(Path(s.path).name != "spending.md" for s in dialog.rows)
    assert sum(window.tag_panel.pending.values()) == total - 2

    dialog.threshold.setValue(0.0)
    assert dialog.bulk_button.text() == f"Accept all {total - 2} at or above"
    dialog.bulk_button.click()
    qtbot.waitUntil(lambda: not dialog.rows and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert dialog.status.text() == "Nothing to review here."
    assert window.tag_panel.suggested_label.text() == "No suggestions to review"
    assert not window.tag_panel.review_button.isEnabled()
    dialog.close()


def test_review_one_tag_from_the_tag_panel(qtbot, window, tmp_path):
    wiring = suggestions(window)
    index_and_suggest(qtbot, window, tmp_path)
    finance = next(i for i, t in window.tag_panel.model.infos.items() if t.key == "Finance")
    assert window.tag_panel.pending.get(finance)
    window.tag_panel.review_requested.emit(finance)
    dialog = wiring.dialog
    qtbot.waitUntil(lambda: bool(dialog.rows) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert dialog.current_tag() == finance
    assert {s.tag_value for s in dialog.rows} == {"Finance"}
    window.grab().save(str(tmp_path / "window.png"))
    dialog.grab().save(str(tmp_path / "review.png"))
    dialog.close()


def test_the_job_is_a_task_that_can_be_cancelled_and_started_again(qtbot, window, tmp_path):
    suggestions(window)
    window.controller.auto_tagging = False
    share = write_share(tmp_path / "share")
    window.controller.index_paths([str(share)])
    qtbot.waitUntil(window.runner.is_idle, timeout=UI_TIMEOUT_MS)
    assert not window.tag_panel.pending  # automatic runs are off: nothing happened
    handle = window.controller.start_tagging()
    assert handle.title == "Suggesting tags" and handle.visible
    window.runner.cancel(JOB_KEY)
    qtbot.waitUntil(window.runner.is_idle, timeout=UI_TIMEOUT_MS)
    window.tag_panel.suggest_requested.emit()  # the panel's "Suggest tags" (no Ollama here: without it)
    qtbot.waitUntil(lambda: bool(window.tag_panel.pending) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS * 4)
