#!/usr/bin/env python3
"""(Re)create SPAR Desktop's bundled sample corpus in resources/sample_corpus/.

The corpus is the file share of a fictional company, Northwind Renewables Ltd. Content is Python data
in resources/sample_corpus_src/; this script renders it to PDF, DOCX, MD, TXT, CSV, JSON and HTML,
plus one file of each richer format (a scanned PDF and a photo for OCR, XLSX, PPTX, EML with an
attachment, ZIP: sample_corpus_src/rich_formats.py), writes the taxonomy export (_taxonomy/), the
per-file document dates (_dates.json) and _README.md, and sets every file's mtime to its document
date. Output is deterministic (fixed seeds, fixed metadata dates, fixed zip timestamps), so re-running
it produces identical bytes.

    python resources/make_sample_corpus.py            # regenerate and verify
    python resources/make_sample_corpus.py --out DIR  # write elsewhere
    python resources/make_sample_corpus.py --verify   # only verify an existing corpus
    python resources/make_sample_corpus.py --restore-mtimes  # after a git checkout: mtimes from _dates.json

Needs pymupdf, python-docx, openpyxl, python-pptx, Pillow and numpy.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import os
import shutil
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sample_corpus_src import (  # noqa: E402
    docs_corporate, docs_engineering, docs_operations, extras, rich_formats, tabular)
from sample_corpus_src.blocks import Doc, Raw, write_doc  # noqa: E402
from sample_corpus_src.taxonomy import ASSIGNMENTS, TAXONOMY, term_names  # noqa: E402

DEFAULT_OUT = HERE / "sample_corpus"
META_DATE = dt.date(2024, 11, 1)  # date given to the taxonomy export and README
AWKWARD = {
    "Archive/Legacy/Site-Handover-Notes-2016.txt",
    "Archive/Legacy/SCADA-Export-Brackenridge-2019.txt",
    "Archive/Legacy/Brackenridge-Commissioning-Report-2012.pdf",
}
SCANNED = {rich_formats.SCANNED_MEMO}  # PDFs whose pages are images only: no text layer, OCR material


def all_items() -> list[Doc | Raw]:
    items = [*docs_engineering.DOCS, *docs_operations.DOCS, *docs_corporate.DOCS]
    items += tabular.raw_files() + extras.intranet_files() + extras.awkward_files() + rich_formats.rich_files()
    paths = [i.path for i in items]
    dupes = [p for p, n in Counter(paths).items() if n > 1]
    if dupes:
        raise SystemExit(f"duplicate paths: {dupes}")
    return items


def taxonomy_files(items) -> list[Raw]:
    known = term_names()
    paths = {i.path for i in items}
    rows = []
    for path, tags in ASSIGNMENTS.items():
        if path not in paths:
            raise SystemExit(f"assignment for unknown file {path}")
        unknown = set(tags) - known
        if unknown:
            raise SystemExit(f"{path}: unknown taxonomy terms {unknown}")
        rows.append([path, *tags])
    width = max(len(r) for r in rows) - 1
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["path"] + [f"tag{i}" for i in range(1, width + 1)])
    w.writerows(rows)
    tax = json.dumps(TAXONOMY, indent=2, ensure_ascii=False) + "\n"
    return [
        Raw("_taxonomy/taxonomy.json", META_DATE, tax.encode("utf-8")),
        Raw("_taxonomy/assignments.csv", META_DATE, buf.getvalue().encode("utf-8")),
    ]


def set_mtime(path: Path, day: dt.date) -> None:
    ts = dt.datetime(day.year, day.month, day.day, 12, 0, tzinfo=dt.timezone.utc).timestamp()
    os.utime(path, (ts, ts))


def generate(out: Path) -> dict[str, str]:
    items = all_items()
    items += taxonomy_files(items) + [extras.readme()]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    dates: dict[str, str] = {}
    for item in items:
        target = out / item.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(item, Doc):
            write_doc(item, target)
        else:
            target.write_bytes(item.data)
        dates[item.path] = item.date.isoformat()
    dates = dict(sorted(dates.items()))
    (out / "_dates.json").write_text(json.dumps(dates, indent=1) + "\n", encoding="utf-8")
    for rel, iso in dates.items():
        set_mtime(out / rel, dt.date.fromisoformat(iso))
    set_mtime(out / "_dates.json", META_DATE)
    # directories get the newest date of their contents (purely cosmetic)
    for d in sorted((p for p in out.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        newest = max(p.stat().st_mtime for p in d.iterdir())
        os.utime(d, (newest, newest))
    return dates


# ---------------------------------------------------------------------------------------------
# verification
# ---------------------------------------------------------------------------------------------
def _words(text: str) -> int:
    return len(text.split())


def _verify_rich(p: Path, ext: str) -> str:
    """Check one file of the richer formats; returns a one-line description or raises."""
    if ext in (".jpg", ".jpeg", ".png"):
        from PIL import Image

        with Image.open(p) as im:
            im.load()
            return f"image {im.width}x{im.height} {im.mode}"
    if ext == ".xlsx":
        import openpyxl

        wb = openpyxl.load_workbook(p, read_only=True)
        sheets = [f"{ws.title} ({sum(1 for _ in ws.iter_rows()) - 1} rows)" for ws in wb.worksheets]
        if not wb.properties.title or len(sheets) < 2:
            raise ValueError("no title or fewer than 2 sheets")
        wb.close()
        return f"sheets: {', '.join(sheets)}"
    if ext == ".pptx":
        from pptx import Presentation

        prs = Presentation(p)
        notes = sum(1 for s in prs.slides if s.has_notes_slide and s.notes_slide.notes_text_frame.text)
        tables = sum(1 for s in prs.slides for sh in s.shapes if sh.has_table)
        if not prs.core_properties.title or notes < len(prs.slides):
            raise ValueError("no title or a slide without speaker notes")
        return f"{len(prs.slides)} slides, {tables} table(s), {notes} with notes, author={prs.core_properties.author!r}"
    if ext == ".eml":
        import email
        import email.policy

        msg = email.message_from_bytes(p.read_bytes(), policy=email.policy.default)
        if not all(msg[h] for h in ("From", "To", "Date", "Subject")):
            raise ValueError("missing From/To/Date/Subject")
        body = msg.get_body(("plain",)).get_content()
        names = [a.get_filename() for a in msg.iter_attachments()]
        if not names:
            raise ValueError("no attachment")
        return f"{_words(body)} words, attachments {names}, subject={msg['Subject']!r}"
    if ext == ".zip":
        import zipfile

        with zipfile.ZipFile(p) as z:
            bad = z.testzip()
            if bad:
                raise ValueError(f"bad member {bad}")
            files = [i.filename for i in z.infolist() if not i.is_dir()]
        return f"{len(files)} members: {', '.join(files)}"
    raise ValueError("unexpected extension")


def verify(out: Path) -> bool:
    import docx
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    ok = True
    dates = json.loads((out / "_dates.json").read_text(encoding="utf-8"))
    files = sorted(p for p in out.rglob("*") if p.is_file())
    by_ext: Counter = Counter()
    total = 0
    for p in files:
        rel = p.relative_to(out).as_posix()
        total += p.stat().st_size
        if rel == "_dates.json":
            continue
        if rel not in dates:
            print(f"  MISSING DATE  {rel}")
            ok = False
        if rel.startswith("_taxonomy/") or rel == "_README.md":
            continue
        ext = p.suffix.lower()
        by_ext[ext] += 1
        expect_fail = rel in AWKWARD
        try:
            if ext == ".pdf" and rel in SCANNED:
                with pymupdf.open(p) as d:
                    if d.page_count == 0 or any(pg.get_text().strip() for pg in d):
                        raise ValueError("a scan must have pages and no text layer")
                    images = [pg.get_images() for pg in d]
                    if not all(images):
                        raise ValueError("page without an image")
                    w, h = images[0][0][2:4]
                    info = f"{d.page_count} scanned page(s), no text layer, image {w}x{h}"
            elif ext == ".pdf":
                with pymupdf.open(p) as d:
                    if d.page_count == 0:
                        raise ValueError("no pages")
                    pages = [pg.get_text() for pg in d]
                    words = sum(_words(t) for t in pages)
                    if any(_words(t) < 20 for t in pages) or not d.metadata.get("title"):
                        raise ValueError("page without text or no title")
                    info = f"{d.page_count} pages, {words} words, title={d.metadata['title']!r}"
            elif ext == ".docx":
                d = docx.Document(p)
                text = "\n".join(par.text for par in d.paragraphs)
                text += "\n".join(c.text for t in d.tables for r in t.rows for c in r.cells)
                cp = d.core_properties
                if not (cp.title and cp.author and cp.created):
                    raise ValueError("core properties missing")
                info = f"{_words(text)} words, author={cp.author!r}, created={cp.created:%Y-%m-%d}"
            elif ext in (".md", ".txt", ".html"):
                raw = p.read_bytes()
                if not raw:
                    raise ValueError("empty file")
                if b"\x00" in raw:
                    raise ValueError("binary content")
                enc = "cp1252" if "Aerion-OM" in rel else "utf-8"
                info = f"{_words(raw.decode(enc))} words ({enc})"
            elif ext == ".csv":
                rows = list(csv.reader(io.StringIO(p.read_text(encoding="utf-8"))))
                info = f"{len(rows) - 1} rows x {len(rows[0])} cols"
            elif ext == ".json":
                json.loads(p.read_text(encoding="utf-8"))
                info = "valid JSON"
            else:
                info = _verify_rich(p, ext)
            if expect_fail:
                print(f"  UNEXPECTED OK {rel}: {info}")
                ok = False
            else:
                print(f"  ok   {rel}: {info}")
        except Exception as e:  # noqa: BLE001
            if expect_fail:
                print(f"  bad  {rel}: {type(e).__name__}: {e} (intended)")
            else:
                print(f"  FAIL {rel}: {type(e).__name__}: {e}")
                ok = False
        if dt.datetime.fromtimestamp(p.stat().st_mtime, dt.timezone.utc).date().isoformat() != dates.get(rel):
            print(f"  MTIME MISMATCH {rel}")
            ok = False
    # taxonomy
    tax = json.loads((out / "_taxonomy/taxonomy.json").read_text(encoding="utf-8"))
    names = term_names(tax)
    with open(out / "_taxonomy/assignments.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))[1:]
    for r in rows:
        if not (out / r[0]).is_file() or not set(filter(None, r[1:])) <= names:
            print(f"  BAD ASSIGNMENT {r}")
            ok = False
    n_docs = sum(by_ext.values())
    print(f"{n_docs} documents: " + ", ".join(f"{e[1:]}={n}" for e, n in sorted(by_ext.items())))
    print(f"{len(names)} taxonomy terms; {len(rows)} files assigned; total size {total / 1e6:.2f} MB")
    return ok


def restore_mtimes(folder: Path) -> int:
    """Set each file's mtime from _dates.json (git checkouts get the checkout time). Returns the count."""
    dates = json.loads((folder / "_dates.json").read_text(encoding="utf-8"))
    n = 0
    for rel, iso in dates.items():
        p = folder / rel
        if p.is_file():
            set_mtime(p, dt.date.fromisoformat(iso))
            n += 1
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (replaced!)")
    ap.add_argument("--verify", action="store_true", help="only verify an existing corpus")
    ap.add_argument("--restore-mtimes", action="store_true", help="only set mtimes from _dates.json")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.restore_mtimes:
        print(f"restored mtimes of {restore_mtimes(args.out)} files in {args.out}")
        return 0
    if not args.verify:
        dates = generate(args.out)
        print(f"wrote {len(dates)} files to {args.out}")
    if args.quiet:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    return 0 if verify(args.out) else 1


if __name__ == "__main__":
    raise SystemExit(main())
