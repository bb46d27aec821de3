"""Settings dialog: Settings.validate() errors are shown inline; valid settings are saved."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QDialogButtonBox

from spar_desktop.core.config import load_settings
from spar_desktop.ui.base.settings_dialog import SettingsDialog


def make(qtbot, settings) -> SettingsDialog:
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def save_button(dialog):
    return dialog.buttons.button(QDialogButtonBox.StandardButton.Save)


def test_invalid_values_show_the_validation_message_inline(qtbot, settings):
    dialog = make(qtbot, settings)
    assert dialog.error.isHidden() and save_button(dialog).isEnabled()
    dialog.child_tokens.setValue(10)
    assert dialog.error.isVisible()
    assert "Child chunk size must be between 32 and 256" in dialog.error.text()
    assert not save_button(dialog).isEnabled()
    dialog.accept()  # even forced, nothing is saved
    assert dialog.result_settings is None and dialog.isVisible()
    assert not (settings.data_dir / "settings.json").exists()

    dialog.child_tokens.setValue(200)
    dialog.chroma_url.setText("ftp://chroma.internal")
    assert "Chroma server URL" in dialog.error.text()
    dialog.chroma_url.setText("")
    dialog.database_url.setText("not a url")
    assert "SQLAlchemy URL" in dialog.error.text()
    dialog.database_url.setText("")
    assert dialog.error.isHidden()


def test_valid_settings_are_saved_to_settings_json(qtbot, settings):
    dialog = make(qtbot, settings)
    dialog.ollama_host.setText("http://gpu-box:11434")
    dialog.ollama_model.setCurrentText("qwen2.5:7b")
    dialog.device.setCurrentText("cpu")
    dialog.parent_tokens.setValue(600)
    save_button(dialog).click()
    assert dialog.result_settings is not None and not dialog.isVisible()
    stored = json.loads((settings.data_dir / "settings.json").read_text())
    assert stored["ollama_host"] == "http://gpu-box:11434" and stored["chunk_parent_tokens"] == 600
    loaded = load_settings(settings.data_dir)
    assert (loaded.ollama_model, loaded.embedding_device) == ("qwen2.5:7b", "cpu")


def test_reading_limits_are_saved_reloaded_and_applied_to_the_open_library(qtbot, settings, library):
    from spar_desktop.ui.base.settings_dialog import apply_live_settings

    dialog = make(qtbot, settings)
    assert dialog.ocr_enabled.isChecked() and dialog.max_text_mb.value() == settings.extract_max_text_mb
    assert (dialog.max_seconds.maximum(), dialog.max_archive_mb.maximum()) == (86_400, 100_000)
    dialog.ocr_enabled.setChecked(False)
    dialog.max_text_mb.setValue(5)
    dialog.max_seconds.setValue(30)
    dialog.max_archive_mb.setValue(64)
    dialog.child_tokens.setValue(128)  # a restart setting: saved, not applied to the open library
    save_button(dialog).click()
    loaded = load_settings(settings.data_dir)
    assert (loaded.ocr_enabled, loaded.extract_max_text_mb, loaded.extract_max_seconds,
            loaded.archive_max_inflated_mb) == (False, 5, 30, 64)
    reopened = make(qtbot, loaded)
    assert not reopened.ocr_enabled.isChecked()
    assert (reopened.max_text_mb.value(), reopened.max_seconds.value(), reopened.max_archive_mb.value()) == (5, 30, 64)

    apply_live_settings(library, dialog.result_settings)
    assert library.settings.extraction_budget().max_chars == 5_000_000 and not library.settings.ocr_enabled
    assert library.settings.extraction_budget().max_inflated_bytes == 64 * 1024 * 1024
    assert library.settings.chunk_child_tokens == settings.chunk_child_tokens


def test_saving_reading_limits_in_the_window_applies_them(qtbot, window):
    dialog = window.open_settings()
    dialog.max_seconds.setValue(45)
    save_button(dialog).click()
    assert window.library.settings.extract_max_seconds == 45
    assert window.viewer.budget().max_seconds == 45.0
    assert "reading limits" in window.statusBar().currentMessage()


def test_keeping_workspaces_up_to_date_round_trips(qtbot, settings):
    dialog = make(qtbot, settings)
    combo = dialog.workspace_updates
    assert [combo.itemText(i) for i in range(combo.count())] == ["Automatically", "Ask", "Never"]
    assert combo.currentData() == "auto" and dialog.idle_days.value() == 30
    combo.setCurrentIndex(combo.findData("ask"))
    dialog.idle_days.setValue(0)
    save_button(dialog).click()
    stored = json.loads((settings.data_dir / "settings.json").read_text())
    assert (stored["workspace_updates"], stored["workspace_idle_archive_days"]) == ("ask", 0)
    loaded = load_settings(settings.data_dir)
    assert (loaded.workspace_updates, loaded.workspace_idle_archive_days) == ("ask", 0)
    reopened = make(qtbot, loaded)
    assert reopened.workspace_updates.currentText() == "Ask" and reopened.idle_days.text() == "Never"
    reopened.workspace_updates.setCurrentIndex(reopened.workspace_updates.findData("never"))
    save_button(reopened).click()
    assert load_settings(settings.data_dir).workspace_updates == "never"


def test_the_update_mode_saved_in_the_window_applies_at_once(qtbot, window):
    dialog = window.open_settings()
    dialog.workspace_updates.setCurrentIndex(dialog.workspace_updates.findData("never"))
    save_button(dialog).click()
    assert window.library.settings.workspace_updates == "never" and window.settings.workspace_updates == "never"


def test_the_models_uses_can_be_turned_off_and_stay_off(qtbot, settings):
    """Reading requests and reranking results with the model are on by default (they only run when
    Ollama answers); a user who does not want them turns each off, and it is saved."""
    dialog = make(qtbot, settings)
    assert dialog.request_llm.isChecked() and dialog.rerank_results.isChecked()
    dialog.request_llm.setChecked(False)
    dialog.rerank_results.setChecked(False)
    save_button(dialog).click()
    loaded = load_settings(settings.data_dir)
    assert (loaded.request_llm, loaded.rerank_results) == (False, False)
    assert not make(qtbot, loaded).request_llm.isChecked()


def test_encoder_choice_says_why_and_is_recorded(qtbot, tmp_path, monkeypatch):
    """A data dir whose vectors were made with fp32 shows fp32 kept (and why); choosing int8 is saved
    and waits for a restart, like the device."""
    import numpy as np

    from spar_desktop.core.documents.types import Chunk
    from spar_desktop.core.embedding.cache import CachedDocument, EmbeddingCache
    from spar_desktop.ui.base.settings_dialog import restart_changes

    monkeypatch.delenv("SPAR_EMBED_RUNTIME", raising=False)
    with EmbeddingCache(tmp_path) as cache:
        cache.put(CachedDocument("h", "chunker", "all-MiniLM-L6-v2@gt-0.1.0", (Chunk("c0", "oil", 0, 3, 1, 1, level="flat"),),
                                 np.ones((1, 4), np.float32) / 2.0))
    settings = load_settings(tmp_path)
    dialog = make(qtbot, settings)
    assert dialog.runtime.currentData() == "onnx"
    assert "kept: this data dir's vectors were made with it" in dialog.runtime_note.text()
    dialog.runtime.setCurrentIndex(dialog.runtime.findData("onnx-int8"))
    save_button(dialog).click()
    assert json.loads((tmp_path / "settings.json").read_text())["embed_runtime"] == "onnx-int8"
    assert restart_changes(settings, dialog.result_settings) == ["embedding encoder"]
    reloaded = load_settings(tmp_path)
    assert (reloaded.embed_runtime, reloaded.embed_runtime_origin) == ("onnx-int8", "settings")
