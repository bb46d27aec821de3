"""File and workspace names holding ESC/OSC/BEL, CR or a newline reach the terminal as visible
escapes (``\\x1b``, ``\\n``...): no screen clear, no retitled window, no forged output line. JSON
output keeps the real names (json.dumps escapes them). Hostile .sparws files end as one clear
error line, never a traceback."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import update

from spar_desktop.cli import main
from spar_desktop.commands.terminal import printable

# What must never be printed raw: C0 (but the newline ending each line), DEL, C1.
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")

CLEAR = "clear\x1b[2J\x1b[H.md"
TITLE = "title\x1b]0;pwned\x07.md"
FORGED = "forged\n  ! everything is fine.md"
CR = "over\rwritten.md"
BROKEN = "broken\x1b[31m.zip"


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean(*texts: str) -> None:
    for text in texts:
        assert not RAW_CONTROL.search(text), repr(text)
        assert "Traceback" not in text


def test_printable_escapes_controls_and_leaves_unicode_alone():
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("t\x1b]0;x\x07") == "t\\x1b]0;x\\x07"
    assert printable("one\ntwo\rthree\tfour") == "one\\ntwo\\rthree\\tfour"
    assert printable("del\x7f c1\x9b nul\x00") == "del\\x7f c1\\x9b nul\\x00"
    assert printable("bad byte \udcff") == "bad byte \\xff"  # surrogateescape, as os.listdir gives it
    assert printable("Café 日本 🙂 naïve — ok") == "Café 日本 🙂 naïve — ok"
    assert printable(42) == "42"


def test_running_text_keeps_its_line_breaks_and_loses_its_control_codes():
    from spar_desktop.commands.terminal import printable_body

    assert printable_body("one\r\ntwo\tthree\nfour") == "one\ntwo\tthree\nfour"
    assert printable_body("a\x1b[2Jb\rc\x07") == "a\\x1b[2Jb\\rc\\x07"


@pytest.fixture
def hostile_share(tmp_path: Path) -> tuple[Path, Path]:
    share, data = tmp_path / "share", tmp_path / "data"
    share.mkdir()
    for name in (CLEAR, TITLE, FORGED, CR):
        (share / name).write_text(f"Gearbox inspection notes in {name!r}.", encoding="utf-8")
    (share / BROKEN).write_bytes(b"PK\x03\x04" + b"\x00" * 40 + b"not really a zip")
    return share, data


def test_scan_and_file_listing_show_hostile_names_escaped(hostile_share, capsys):
    share, data = hostile_share
    code, out, err = spar(capsys, data, "index", str(share), "--quiet")
    assert code == 0
    assert_clean(out, err)
    assert f"! {share}/broken\\x1b[31m.zip:" in out  # the problem line, escaped

    code, out, err = spar(capsys, data, "files")
    assert code == 0
    assert_clean(out, err)
    lines = out.splitlines()
    assert len(lines) == 5  # one line per file: the newline in a name forged none
    for shown in ("clear\\x1b[2J\\x1b[H.md", "title\\x1b]0;pwned\\x07.md", "forged\\n  ! everything is fine.md",
                  "over\\rwritten.md", "broken\\x1b[31m.zip"):
        assert sum(shown in line for line in lines) == 1, shown

    code, out, _ = spar(capsys, data, "files", "--json")
    assert {Path(r["path"]).name for r in json.loads(out)} == {CLEAR, TITLE, FORGED, CR, BROKEN}  # real names


def test_workspace_commands_show_hostile_names_and_paths_escaped(hostile_share, capsys, tmp_path):
    share, data = hostile_share
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0

    code, out, err = spar(capsys, data, "ws", "create", "bad\x1b[2Jname", "--all-files")
    assert code == 1 and "U+001B" in err
    assert_clean(out, err)
    code, out, err = spar(capsys, data, "ws", "create", "a/b", "--all-files")
    assert code == 1 and "path separator" in err

    code, out, err = spar(capsys, data, "ws", "create", "notes", "--prompt", "gearbox\x1b]0;x\x07 md files",
                          "--all-files")
    assert code == 0
    assert_clean(out, err)
    assert "Request: gearbox\\x1b]0;x\\x07 md files" in out
    code, out, err = spar(capsys, data, "ws", "explain", "notes")
    assert_clean(out, err)
    assert "gearbox\\x1b]0;x\\x07" in out
    code, out, err = spar(capsys, data, "ws", "files", "notes")  # before the first build: what it admits
    assert_clean(out, err)
    assert "forged\\n  ! everything is fine.md" in out

    code, out, err = spar(capsys, data, "ws", "build", "notes")
    assert code == 0
    assert_clean(out, err)
    code, out, err = spar(capsys, data, "ws", "files", "notes")
    assert_clean(out, err)
    assert "title\\x1b]0;pwned\\x07.md" in out and len(out.splitlines()) == 5
    code, out, err = spar(capsys, data, "ws", "search", "notes", "gearbox inspection notes")
    assert code == 0
    assert_clean(out, err)
    assert "clear\\x1b[2J\\x1b[H.md" in out

    # A workspace named before names were checked (an older release): still shown escaped.
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.workspaces.models import Workspace

    lib = Library.open(load_settings(data))
    with lib.session() as s:
        s.execute(update(Workspace).where(Workspace.name == "notes").values(name="old\x1b[2J\nname"))
    lib.close()
    code, out, err = spar(capsys, data, "ws", "list")
    assert_clean(out, err)
    assert out.startswith("old\\x1b[2J\\nname") and len(out.splitlines()) == 1
    code, out, err = spar(capsys, data, "ws", "files", "nope")
    assert code == 1 and "old\\x1b[2J\\nname" in err  # the known names, escaped
    assert_clean(out, err)

    code, out, err = spar(capsys, data, "ws", "export", "old\x1b[2J\nname", str(tmp_path / "old.sparws"))
    assert code == 0
    assert "paths in the export are absolute: the importer matches them against its own index" in out
    assert_clean(out, err)

    code, out, err = spar(capsys, data, "ws", "import", str(tmp_path / "old.sparws"))
    assert code == 0
    assert_clean(out, err)
    assert "imported workspace 'old [2J name'" in out and "note: the file names it 'old\\x1b[2J\\nname'" in out


def _sparws(path: Path, manifest: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.json", manifest)
    return path


def test_hostile_sparws_files_end_as_one_clear_error_and_import_nothing(tmp_path, capsys):
    data = tmp_path / "data"
    hostile = {
        "deep": b'{"format": "sparws", "version": 1, "name": "x", "filter": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "digits": b'{"format": "sparws", "version": ' + b"7" * 5000 + b"}",
        "nan": b'{"format": "sparws", "version": 1, "name": "x", "files": [], "filter": {"tolerance": NaN}}',
        "types": b'{"format": "sparws", "version": 1, "name": "x", "files": [], "filter": {"formats": {"a": 1}}}',
    }
    for label, raw in hostile.items():
        code, out, err = spar(capsys, data, "ws", "import", str(_sparws(tmp_path / f"{label}.sparws", raw)))
        assert code == 1 and err.startswith("spar: error: ") and len(err.splitlines()) == 1, (label, err)
        assert_clean(out, err)
    code, out, _ = spar(capsys, data, "ws", "list", "--json")
    assert json.loads(out) == []

    name = "evil\x1b]0;pwned\x07"
    manifest = {"format": "sparws", "version": 1, "name": name, "filter": {},
                "files": [{"path": "/their/share/report\x1b[2J\n  ! forged.pdf", "content_hash": "0" * 64}]}
    code, out, err = spar(capsys, data, "ws", "import", str(_sparws(tmp_path / "ok.sparws", json.dumps(manifest).encode())))
    assert code == 0
    assert_clean(out, err)
    assert "imported workspace 'evil ]0;pwned'" in out
    assert "! dropped, not in this index: /their/share/report\\x1b[2J\\n  ! forged.pdf" in out
    code, out, _ = spar(capsys, data, "ws", "import", str(tmp_path / "ok.sparws"), "--name", "EVIL ]0;PWNED")
    assert code == 1


def test_answers_threads_and_relations_show_hostile_text_escaped(hostile_share, capsys, monkeypatch, tmp_path):
    """A passage quoted from a hostile file (retrieval-only answer), the thread that keeps it and
    the relation listings reach the terminal escaped; line breaks of running text stay."""
    from spar_desktop import cli
    from tests.support.servers import free_port

    for m in ("spar_desktop.commands.ask_cmd", "spar_desktop.commands.thread_cmd",
              "spar_desktop.commands.relations_cmd"):
        if m not in cli.COMMAND_MODULES:
            monkeypatch.setattr(cli, "COMMAND_MODULES", cli.COMMAND_MODULES + [m])
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")  # nothing listens: retrieval only
    share, data = hostile_share
    (share / "inject.md").write_text("Gearbox oil report.\x1b[2J\x1b]0;owned\x07\r\nSecond line\x1b[31m red.",
                                     encoding="utf-8")
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert spar(capsys, data, "ws", "create", "notes", "--all-files", "--build")[0] == 0

    code, out, err = spar(capsys, data, "ask", "notes", "gearbox oil report")
    assert code == 0
    assert_clean(out, err)
    assert "\\x1b[2J\\x1b]0;owned\\x07" in out and "Second line\\x1b[31m red" in out
    code, out, err = spar(capsys, data, "thread", "show", "1")
    assert code == 0
    assert_clean(out, err)
    assert "\\x1b[2J" in out
    code, out, err = spar(capsys, data, "thread", "export", "1")
    assert_clean(out, err)

    code, out, err = spar(capsys, data, "relations", "build", "--method", "tfidf", "--yes")
    assert code == 0, err
    code, out, err = spar(capsys, data, "relations", "top", str(share / CLEAR))
    assert code == 0, err
    assert_clean(out, err)
