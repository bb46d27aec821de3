"""Settings dialog: Settings.validate() errors are shown inline; valid settings are saved."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QDialogButtonBox

from spar_desktop.core.config import load_settings
from spar_desktop.ui.settings_dialog import SettingsDialog


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
