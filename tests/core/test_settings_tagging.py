"""Automatic tag suggestions after a scan are on by default, off in settings.json or with
SPAR_AUTO_TAGGING=0 (the environment wins, as for the other variables)."""

from __future__ import annotations

import json

from spar_desktop.core.config import load_settings


def test_auto_tagging_default_file_and_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("SPAR_AUTO_TAGGING", raising=False)
    assert load_settings(tmp_path).auto_tagging is True
    (tmp_path / "settings.json").write_text(json.dumps({"version": 1, "auto_tagging": False}), encoding="utf-8")
    assert load_settings(tmp_path).auto_tagging is False
    monkeypatch.setenv("SPAR_AUTO_TAGGING", "1")
    assert load_settings(tmp_path).auto_tagging is True
    monkeypatch.setenv("SPAR_AUTO_TAGGING", "off")
    (tmp_path / "settings.json").unlink()
    assert load_settings(tmp_path).auto_tagging is False
