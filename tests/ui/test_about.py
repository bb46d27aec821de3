"""Help ▸ About SPAR Desktop: version, data folder, and the third-party licences file."""

from __future__ import annotations

import spar_desktop
from spar_desktop.resources_path import third_party_licenses_path
from spar_desktop.ui.base.about_dialog import AboutDialog, LicensesDialog


def test_about_shows_version_data_dir_and_licences(qtbot, tmp_path):
    dialog = AboutDialog(tmp_path / "data", None)
    qtbot.addWidget(dialog)
    dialog.show()
    assert spar_desktop.__version__ in dialog.title.text()
    assert str(tmp_path / "data") in dialog.data_label.text()
    assert "AGPL" in dialog.licence_label.text() and "LGPL" in dialog.licence_label.text()
    assert not dialog.icon_label.pixmap().isNull()  # the app icon, found through resources_path
    licences = dialog.show_licenses()
    assert licences.isVisible()
    text = licences.text.toPlainText()
    assert third_party_licenses_path() is not None and licences.path == third_party_licenses_path()
    assert "pymupdf" in text.lower() and "AGPL-3.0" in text
    assert "PySide6" in text and "LGPL-3.0" in text
    assert "all-MiniLM-L6-v2" in text and "Apache-2.0" in text
    assert dialog.show_licenses() is licences  # one window, raised again


def test_licences_dialog_says_when_the_file_is_missing(qtbot, tmp_path, monkeypatch):
    import spar_desktop.ui.base.about_dialog as about

    monkeypatch.setattr(about, "third_party_licenses_path", lambda: None)
    dialog = LicensesDialog(None)
    qtbot.addWidget(dialog)
    assert "not found" in dialog.text.toPlainText() and "AGPL" in dialog.text.toPlainText()


def test_help_menu_opens_the_about_dialog(qtbot, window):
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    about = next(a for a in help_menu.actions() if a.text() == "About SPAR Desktop")
    about.trigger()
    qtbot.waitUntil(lambda: getattr(window, "about_dialog", None) is not None and window.about_dialog.isVisible())
    assert str(window.settings.data_dir) in window.about_dialog.data_label.text()
    window.about_dialog.close()
