"""A share full of hostile files, through the CLI as a user runs it: every bad file gets a clear
message of its own, the scan and the workspace build go on (the good file is searchable) and
nothing in the share changes. (Memory of such files is measured in benchmarks/, not here.)"""

from __future__ import annotations

import io
import json
import zipfile
from email.message import EmailMessage
from pathlib import Path

from spar_desktop.cli import main


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def _encrypted(plain: bytes) -> bytes:
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(plain)).encrypt("secret", out)
    return out.getvalue()


def _office(kind: str) -> bytes:
    buf = io.BytesIO()
    if kind == "docx":
        import docx

        d = docx.Document()
        d.add_paragraph("classified")
        d.save(buf)
    elif kind == "xlsx":
        from openpyxl import Workbook

        wb = Workbook()
        wb.active.append(["classified"])
        wb.save(buf)
    else:
        from pptx import Presentation

        deck = Presentation()
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "classified"
        deck.save(buf)
    return buf.getvalue()


def _nested_mail(depth: int) -> bytes:
    inner = EmailMessage()
    inner["Subject"] = "level 0"
    inner.set_content("innermost")
    for level in range(1, depth + 1):
        outer = EmailMessage()
        outer["Subject"] = f"level {level}"
        outer.set_content(f"wrapper {level}")
        outer.add_attachment(inner)
        inner = outer
    return bytes(inner)


def make_hostile_share(root: Path) -> None:
    root.mkdir(parents=True)
    for kind in ("docx", "xlsx", "pptx"):
        (root / f"locked.{kind}").write_bytes(_encrypted(_office(kind)))
    (root / "corrupt.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 40 + b"not really a zip")
    with zipfile.ZipFile(root / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("zeros.bin", "w") as member:  # 64 MiB of zeros: ~64 KB compressed
            block = b"\x00" * (1 << 20)
            for _ in range(64):
                member.write(block)
    with zipfile.ZipFile(root / "traversal.zip", "w") as zf:
        zf.writestr("../../outside.txt", "escape")
        zf.writestr("/abs/path.txt", "absolute")
    (root / "nested.eml").write_bytes(_nested_mail(50))
    (root / "export.xls").write_text("<html><body><table><tr><th>Site</th><th>Status</th></tr>"
                                     "<tr><td>Carrow Moor</td><td>curtailed</td></tr></table></body></html>",
                                     encoding="utf-8")
    (root / "not-outlook.msg").write_bytes(b"this is not an OLE file at all\n" * 10)
    (root / "good.md").write_text("The Carrow Moor substation transformer was replaced in 2021.", encoding="utf-8")


def test_hostile_files_get_messages_and_the_rest_goes_on(tmp_path, capsys, monkeypatch):
    share, data = tmp_path / "share", tmp_path / "data"
    make_hostile_share(share)
    before = {str(p): p.read_bytes() for p in share.rglob("*") if p.is_file()}
    # A small inflated-size limit, as a user can set it: the 64 MiB member is over it.
    (data).mkdir()
    (data / "settings.json").write_text(json.dumps({"archive_max_inflated_mb": 16}), encoding="utf-8")

    code, out, _ = spar(capsys, data, "index", str(share), "--quiet")
    assert code == 0
    code, out, _ = spar(capsys, data, "files", "--json")
    rows = {r["path"].split(str(share) + "/", 1)[1]: r for r in json.loads(out)}
    for kind in ("docx", "xlsx", "pptx"):
        assert rows[f"locked.{kind}"]["status"] == "encrypted" and "password" in rows[f"locked.{kind}"]["error"]
    assert rows["corrupt.zip"]["status"] == "error" and "zip" in rows["corrupt.zip"]["error"]
    bomb = rows["bomb.zip!/zeros.bin"]
    assert bomb["status"] == "error" and ("too large" in bomb["error"] or "zip bomb" in bomb["error"])
    unsafe = [r for p, r in rows.items() if p.startswith("traversal.zip!/")]
    assert len(unsafe) == 2 and all("unsafe name" in r["error"] for r in unsafe)
    nested = [p for p in rows if p.startswith("nested.eml!/")]
    assert 0 < len(nested) <= 3  # the nesting limit, not fifty levels
    assert rows["not-outlook.msg"]["status"] == "error" and "OLE" in rows["not-outlook.msg"]["error"]
    assert rows["good.md"]["status"] == "ok"

    assert spar(capsys, data, "ws", "create", "all", "--all-files")[0] == 0
    code, out, _ = spar(capsys, data, "ws", "build", "all", "--json")
    built = json.loads(out)
    assert code == 0 and built["ready"] >= 2, built  # good.md and the HTML table named .xls at least
    states = {p["path"].split(str(share) + "/", 1)[1]: p for p in built["problems"]}
    assert "password" in states["locked.docx"]["message"]
    code, out, _ = spar(capsys, data, "ws", "search", "all", "Carrow Moor curtailed status", "--json")
    paths = [h["path"] for h in json.loads(out)["hits"]]
    assert any(p.endswith("export.xls") for p in paths) and any(p.endswith("good.md") for p in paths)

    assert {str(p): p.read_bytes() for p in share.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "outside.txt").exists() and not Path("/abs/path.txt").exists()
