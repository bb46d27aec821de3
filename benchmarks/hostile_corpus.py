"""A hostile share, indexed and built as one workspace, as a user would run it (issue 17, Measured).

Writes a share of hostile files (bombs, lies, huge and malformed files; see ``write_share``) beside
a few good notes, snapshots it (bytes, mode and mtime of every entry, links not followed), then in
child processes runs `spar index`, `spar ws create all --all-files` and `spar ws build all`, each
child's peak RSS read from /proc (VmHWM) while it runs. Then reads each file on its own in one more child with the
default budget to name the slowest, and compares the snapshot. Prints JSON: peak RSS per step
(goal ≤ 1.5 GB for the whole build), wall time per step, statuses of every file, the slowest file,
whether the good notes are searchable, and the snapshot diff (must be empty).
Usage: python benchmarks/hostile_corpus.py [--out benchmarks/results/hostile_corpus.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.cli.test_cli_hostile_share import make_hostile_share  # noqa: E402
from tests.core.library.test_scan_error_boundary import YEAR_2400_NS, tiny_pdf  # noqa: E402

MB = 1 << 20
READ_EACH = r"""
import json, os, sys, time
from spar_desktop.core.config import load_settings
from spar_desktop.core.documents.reading import ReadOptions, read_document
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File
settings = load_settings(sys.argv[1])
lib = Library.open(settings)
options = ReadOptions(budget=settings.extraction_budget(), ocr=settings.ocr_enabled)
with lib.session() as s:
    files = [(f.path, f.format, f.content_hash) for f in s.query(File).all()]
out = []
for path, fmt, digest in files:
    t0 = time.perf_counter()
    try:
        read_document(path, fmt, digest, options)
        how = "read"
    except Exception as exc:  # what the build shows as the file's state
        how = f"{type(exc).__name__}: {str(exc)[:120]}"
    out.append((time.perf_counter() - t0, path, how))
print(json.dumps(sorted(out, reverse=True)[:5]))
"""


def _docx_with_body(path: Path, body_xml: bytes, core_xml: bytes = b"") -> None:
    """A minimal DOCX whose document.xml (and optionally core.xml) is what we say."""
    ct = (b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
          b'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
          b'<Default Extension="xml" ContentType="application/xml"/>'
          b'<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.'
          b'wordprocessingml.document.main+xml"/></Types>')
    rels = (b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
            b'officeDocument" Target="word/document.xml"/></Relationships>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", ct)
        zf.writestr("_rels/.rels", rels)
        with zf.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(body_xml)
        if core_xml:
            with zf.open("docProps/core.xml", "w", force_zip64=True) as member:
                member.write(core_xml)


def write_share(root: Path) -> list[str]:
    """The hostile files of the issue's list (and the CLI test's), plus good notes; returns the
    good notes' names."""
    make_hostile_share(root)  # encrypted Office files, corrupt/bomb/traversal zips, 50 nested mails...
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    para = b"<w:p><w:r><w:t>" + b"inflate " * 500 + b"</w:t></w:r></w:p>"
    body = b"<w:document " + w.encode() + b"><w:body>" + para * 5000 + b"</w:body></w:document>"  # ~20M chars
    _docx_with_body(root / "inflates-to-20M-chars.docx", body)
    core = b'<?xml version="1.0"?><cp:coreProperties xmlns:cp="x"><dc:title xmlns:dc="y">' + b"A" * (1 << 30) + b"</dc:title></cp:coreProperties>"
    _docx_with_body(root / "core-xml-1GiB.docx", b"<w:document " + w.encode() + b"><w:body/></w:document>", core)
    with open(root / "million-columns.csv", "w", encoding="utf-8") as fh:
        fh.write(",".join(f"c{i}" for i in range(500_000)) + "\n")
    with open(root / "one-line-200MB.csv", "w", encoding="utf-8") as fh:
        chunk = "word," * (MB // 5)
        for _ in range(200):
            fh.write(chunk)
    (root / "nested-200k-divs.html").write_text("<html><body>" + "<div>" * 200_000 + "deep" + "</div>" * 200_000,
                                                encoding="utf-8")
    (root / "pages-99999999.pdf").write_bytes(tiny_pdf(99_999_999))
    future = root / "modified-in-2400.txt"
    future.write_text("a note from the future", encoding="utf-8")
    os.utime(future, ns=(YEAR_2400_NS, YEAR_2400_NS))
    for raw in (b"caf\xe9.txt", b"caf\xe8.txt"):  # names differing only in an undecodable byte
        with open(os.path.join(os.fsencode(root), raw), "wb") as fh:
            fh.write(b"latin-1 named note")
    (root / "lone-surrogate.json").write_bytes(b'{"text": "\\ud800 broken"}')
    (root / "binary-as-text.txt").write_bytes(os.urandom(2 * MB))
    (root / "empty.pdf").write_bytes(b"")
    (root / "passwd-link.txt").symlink_to("/etc/passwd")
    for i, (a, b) in enumerate(((b"A", b"B"),)):  # two same-size 40 MB files differing in the middle
        for tag in (a, b):
            with open(root / f"big-40MB-{tag.decode()}.txt", "wb") as fh:
                half = (b"filler text line\n" * (MB // 17)) * 20
                fh.write(half + b"unique word " + tag * 8 + b"\n" + half)
    good = []
    for i, text in enumerate(("The Carrow Moor substation transformer was replaced in 2021.",
                              "Blade erosion survey at the offshore site found category 4 damage.",
                              "The board approved the capital budget for the gearbox retrofit.")):
        (root / f"good-{i}.md").write_text(text, encoding="utf-8")
        good.append(f"good-{i}.md")
    return good


def snapshot(root: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(os.fsencode(root)):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            digest = ""
            if os.path.isfile(p) and not os.path.islink(p):
                h = hashlib.blake2b()
                with open(p, "rb") as fh:
                    for block in iter(lambda: fh.read(MB), b""):
                        h.update(block)
                digest = h.hexdigest()
            out[os.fsdecode(p)] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def _hwm_mb(pid: int) -> float:
    """The process's own peak resident memory (VmHWM: per address space, so it starts afresh at
    exec; ru_maxrss would carry over the forking parent's size, here the GiB it wrote)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_child(cmd: list[str], env: dict[str, str]) -> dict:
    """Run ``cmd``; its wall time, exit code, peak RSS (MB, VmHWM read every 0.1 s until it
    exits) and output."""
    t0 = time.perf_counter()
    peak = 0.0
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=out_f, stderr=err_f)
        while proc.poll() is None:
            peak = max(peak, _hwm_mb(proc.pid))
            time.sleep(0.1)
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    return {"seconds": round(time.perf_counter() - t0, 1), "exit": proc.returncode,
            "peak_rss_mb": round(peak, 1), "stdout": out.decode(errors="replace"),
            "stderr_tail": err.decode(errors="replace")[-600:]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-hostile-"))
    try:
        share, data = work / "share", work / "data"
        good = write_share(share)
        before = snapshot(share)
        env = dict(os.environ, OLLAMA_HOST="http://127.0.0.1:9", PYTHONPATH=str(ROOT))
        spar = [sys.executable, "-m", "spar_desktop", "--cli", "--data-dir", str(data)]
        steps = {}
        steps["index"] = run_child(spar + ["index", str(share), "--quiet"], env)
        steps["create"] = run_child(spar + ["ws", "create", "all", "--all-files"], env)
        steps["build"] = run_child(spar + ["ws", "build", "all", "--json"], env)
        files = json.loads(subprocess.run(spar + ["files", "--json"], env=env, capture_output=True, text=True).stdout)
        statuses: dict[str, int] = {}
        for f in files:
            statuses[f["status"]] = statuses.get(f["status"], 0) + 1
        search = subprocess.run(spar + ["ws", "search", "all", "Carrow Moor substation transformer", "--json"],
                                env=env, capture_output=True, text=True)
        hits = [Path(h["path"]).name for h in json.loads(search.stdout)["hits"]] if search.returncode == 0 else []
        slowest = subprocess.run([sys.executable, "-c", READ_EACH, str(data)], env=env, cwd=ROOT,
                                 capture_output=True, text=True)
        after = snapshot(share)
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        build = steps["build"]
        try:
            built = json.loads(build["stdout"])
            build_summary = {k: built.get(k) for k in ("admitted", "ready", "chunks")} | {
                "problems": len(built.get("problems", []))}
        except ValueError:
            build_summary = {"unparsed": build["stdout"][-400:]}
        result = {
            "benchmark": "hostile_corpus", "files_in_share": len(before), "indexed_rows": len(files),
            "statuses": statuses, "every_row_has_a_status": all(f.get("status") for f in files),
            "steps": {k: {x: v[x] for x in ("seconds", "exit", "peak_rss_mb")} for k, v in steps.items()},
            "peak_rss_mb_whole_build": max(v["peak_rss_mb"] for v in steps.values()),
            "goal_peak_rss_mb": 1536, "build": build_summary,
            "good_note_found": good[0] in hits[:3],
            "slowest_files": json.loads(slowest.stdout) if slowest.returncode == 0 else slowest.stderr[-400:],
            "user_files_changed": changed, "load_average": os.getloadavg(),
        }
        text = json.dumps(result, indent=1, default=str)
        print(text)
        if args.out:
            Path(args.out).write_text(text + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
