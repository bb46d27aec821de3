"""Extraction speed of the spreadsheet, slide, word-processor and legacy readers, and the memory of
reading a ~200 MB workbook.

Generates a file of a few MB per format (xlsx, ods, pptx, odp, odt, rtf; xls, doc and ppt when
LibreOffice is installed to write them) and extracts each through
``spar_desktop.core.documents.extract.extract`` with the default budget, best of --runs: MB/s of
file, pages/s and characters kept. Then writes a ~--big-mb MB .xlsx with openpyxl's write-only mode
(cached in /tmp/spar-bench-extract/ between runs) and extracts it in a child process, beside a child
that only imports the libraries; peak RSS of each from resource.getrusage(RUSAGE_CHILDREN).
Goal: the extracting child ≤ 300 MB. With the default budget the big workbook is read until the
2M-character limit (20M before this release); the JSON says how many rows that was. (XLSX is read with expat, not openpyxl:
openpyxl's read-only loader alone took 336 s on this file, see extract_sheets.)
Prints JSON (also written to --out).
Usage: python benchmarks/extract_formats.py [--mb 4] [--runs 3] [--big-mb 200] [--out benchmarks/results/extract_formats.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spar_desktop.core.documents.extract import ExtractionError, extract  # noqa: E402

CACHE = Path("/tmp/spar-bench-extract")
WORDS = ("turbine gearbox bearing oil blade inspection budget contract policy safety harness maintenance "
         "outage forecast invoice board minutes design review audit erosion crack vibration alarm repair "
         "resin survey capital contingency climber rescue plan site pounds million energy").split()
SITES = ("North", "South", "East", "West", "Offshore")
HEADER = ["Sample", "Site", "Erosion category", "Depth mm", "Inspected", "Inspector", "Remark"]


def sentence(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def rows(rng: random.Random, n: int, start: int = 0):
    day = dt.datetime(2015, 1, 1)
    for i in range(start, start + n):
        yield [f"BR-T{i}", rng.choice(SITES), rng.randint(1, 5), round(rng.uniform(0, 40), 2),
               day + dt.timedelta(days=i % 3000), f"Inspector {i % 97}", sentence(rng, 6)]


# ------------------------------------------------------------------------------ generators


def write_xlsx(path: Path, n_rows: int, sheets: int = 3, seed: int = 1) -> None:
    import openpyxl

    rng = random.Random(seed)
    wb = openpyxl.Workbook(write_only=True)
    for s in range(sheets):
        ws = wb.create_sheet(f"Survey {s + 1}")
        ws.append(HEADER)
        for row in rows(rng, n_rows // sheets, s * n_rows):
            ws.append(row)
    wb.properties.title = "Erosion survey"
    wb.save(path)


def _odf(path: Path, mime: str, body: str, chunks) -> None:
    """A minimal OpenDocument zip; ``chunks`` are XML strings streamed into content.xml."""
    ns = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
          'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
          'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), mime)
        zf.writestr("META-INF/manifest.xml",
                    '<?xml version="1.0"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:'
                    'xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" '
                    f'manifest:media-type="{mime}"/></manifest:manifest>')
        with zf.open("content.xml", "w") as f:
            f.write(f'<?xml version="1.0"?><office:document-content {ns}><office:body><office:{body}>'.encode())
            for chunk in chunks:
                f.write(chunk.encode())
            f.write(f"</office:{body}></office:body></office:document-content>".encode())


def _ods_cell(value) -> str:
    if isinstance(value, (int, float)):
        return f'<table:table-cell office:value-type="float" office:value="{value}"><text:p>{value}</text:p></table:table-cell>'
    if isinstance(value, dt.datetime):
        return (f'<table:table-cell office:value-type="date" office:date-value="{value.date().isoformat()}">'
                f'<text:p>{value:%d/%m/%Y}</text:p></table:table-cell>')
    return f'<table:table-cell office:value-type="string"><text:p>{escape(value)}</text:p></table:table-cell>'


def write_ods(path: Path, n_rows: int, sheets: int = 3, seed: int = 2) -> None:
    rng = random.Random(seed)

    def chunks():
        for s in range(sheets):
            yield f'<table:table table:name="Survey {s + 1}">'
            for row in [HEADER, *rows(rng, n_rows // sheets, s * n_rows)]:
                yield "<table:table-row>" + "".join(_ods_cell(v) for v in row) + "</table:table-row>"
            yield ('<table:table-row table:number-rows-repeated="1048000">'
                   '<table:table-cell table:number-columns-repeated="1024"/></table:table-row></table:table>')

    _odf(path, "application/vnd.oasis.opendocument.spreadsheet", "spreadsheet", chunks())


def write_pptx(path: Path, slides: int, seed: int = 3) -> None:
    import pptx
    from pptx.util import Inches

    rng = random.Random(seed)
    prs = pptx.Presentation()
    for i in range(slides):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = f"Site review {i}: {sentence(rng, 4)}"
        slide.placeholders[1].text = "\n".join(sentence(rng, 12) for _ in range(4))
        table = slide.shapes.add_table(4, 3, Inches(1), Inches(5), Inches(8), Inches(1.5)).table
        for r in range(4):
            for c in range(3):
                table.cell(r, c).text = ("Site", "Cost", "Status")[c] if r == 0 else sentence(rng, 2)
        slide.notes_slide.notes_text_frame.text = sentence(rng, 20)
    prs.save(str(path))


def write_odp(path: Path, slides: int, seed: int = 4) -> None:
    rng = random.Random(seed)

    def frame(text: str, y: int, cls: str = "") -> str:
        attr = f' presentation:class="{cls}"' if cls else ""
        return (f'<draw:frame svg:x="2cm" svg:y="{y}cm" svg:width="20cm" svg:height="2cm"{attr}>'
                f'<draw:text-box><text:p>{escape(text)}</text:p></draw:text-box></draw:frame>')

    def chunks():
        for i in range(slides):
            body = "".join(frame(" ".join(sentence(rng, 12) for _ in range(3)), 4 + k) for k in range(4))
            yield (f'<draw:page draw:name="p{i}">{frame(f"Site review {i}", 1, "title")}{body}'
                   f'<presentation:notes>{frame(sentence(rng, 20), 1, "notes")}</presentation:notes></draw:page>')

    _odf(path, "application/vnd.oasis.opendocument.presentation", "presentation", chunks())


def write_odt(path: Path, paragraphs: int, seed: int = 5) -> None:
    rng = random.Random(seed)

    def chunks():
        for i in range(paragraphs):
            if i % 50 == 0:
                yield f'<text:h text:outline-level="1">Section {i // 50}: {sentence(rng, 4)}</text:h>'
            if i % 200 == 199:
                cells = "".join(f"<table:table-row>{''.join(_ods_cell(v) for v in row[:4])}</table:table-row>"
                                for row in [HEADER, *rows(rng, 5, i)])
                yield f'<table:table table:name="T{i}">{cells}</table:table>'
            yield f"<text:p>{escape(' '.join(sentence(rng) for _ in range(5)))}</text:p>"

    _odf(path, "application/vnd.oasis.opendocument.text", "text", chunks())


def write_rtf(path: Path, paragraphs: int, seed: int = 6) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="ascii") as f:
        f.write(r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Arial;}}{\info{\title Erosion report}}" "\n")
        for i in range(paragraphs):
            if i % 100 == 0:  # a small picture every 100 paragraphs, as Word writes them
                f.write(r"{\pict\pngblip\picw64\pich64 " + "89504e470d0a1a0a" * 256 + "}\n")
            f.write(r"{\pard\f0\fs20 " + " ".join(sentence(rng) for _ in range(4)).replace(" crack", r" \b crack\b0") + r"\par}" "\n")
        f.write("}")


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert(source: Path, target: str, work: Path) -> Path | None:
    exe = soffice()
    if not exe:
        return None
    subprocess.run([exe, f"-env:UserInstallation={(work / 'lo-profile').as_uri()}", "--headless",
                    "--convert-to", target, "--outdir", str(work), str(source)],
                   check=True, capture_output=True, timeout=900)
    out = work / f"{source.stem}.{target}"
    return out if out.is_file() else None


# ------------------------------------------------------------------------------ measuring


def measure(path: Path, runs: int) -> dict:
    best, doc = None, None
    for _ in range(runs):
        t0 = time.perf_counter()
        try:
            doc = extract(path)
        except ExtractionError as exc:  # e.g. over the time limit: a result too
            return {"file_mb": round(path.stat().st_size / 1e6, 2), "error": exc.message}
        elapsed = time.perf_counter() - t0
        best = elapsed if best is None else min(best, elapsed)
    mb = path.stat().st_size / 1e6
    return {"file_mb": round(mb, 2), "seconds": round(best, 3), "mb_per_s": round(mb / best, 2),
            "pages": len(doc.pages), "pages_per_s": round(len(doc.pages) / best, 1),
            "chars": len(doc.text), "warnings": list(doc.warnings)}


def big_xlsx(target_mb: int) -> Path:
    """A ~target_mb MB workbook, written once: the row count comes from a small sample's size."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"big-{target_mb}mb-v1.xlsx"
    if path.is_file():
        return path
    sample = CACHE / "sample.xlsx"
    write_xlsx(sample, 30_000, sheets=1)
    n_rows = int(30_000 * target_mb * 1e6 / sample.stat().st_size)
    sample.unlink()
    partial = path.with_suffix(".partial")
    write_xlsx(partial, n_rows, sheets=2)
    partial.rename(path)
    return path


CHILD = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
import xml.parsers.expat, zipfile
from spar_desktop.core.documents import extract_legacy, extract_sheets
from spar_desktop.core.documents.extract import extract
out = {{}}
if {path!r}:
    t0 = time.perf_counter()
    doc = extract({path!r})
    out = {{"seconds": round(time.perf_counter() - t0, 1), "pages": len(doc.pages), "chars": len(doc.text),
           "rows_read": doc.text.count("\\n\\nRow "), "warnings": list(doc.warnings)}}
out["self_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""


# RUSAGE_CHILDREN is a maximum over every child ever waited for (LibreOffice included), so each
# measured child is started from a fresh intermediate process that reports only its own child.
WRAPPER = """
import json, resource, subprocess, sys
proc = subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True, text=True)
if proc.returncode:
    sys.exit(proc.stderr)
result = json.loads(proc.stdout.strip().splitlines()[-1])
result["children_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
print(json.dumps(result))
"""


def child_peak(path: str) -> dict:
    """Peak RSS of a child that extracts ``path`` (or only imports the libraries when empty)."""
    code = CHILD.format(root=str(ROOT), path=path)
    proc = subprocess.run([sys.executable, "-c", WRAPPER, code], check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=4.0, help="rough size of each generated file")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--big-mb", type=int, default=200)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "extract_formats.json")
    args = ap.parse_args()
    scale = args.mb / 4.0
    work = Path(tempfile.mkdtemp(prefix="spar-extract-bench-"))
    try:
        files: dict[str, Path] = {}
        t0 = time.perf_counter()
        for fmt, write, amount in (("xlsx", write_xlsx, 100_000), ("ods", write_ods, 60_000),
                                   ("pptx", write_pptx, 1_500), ("odp", write_odp, 8_000),
                                   ("odt", write_odt, 40_000), ("rtf", write_rtf, 8_000)):
            files[fmt] = work / f"sample.{fmt}"
            write(files[fmt], int(amount * scale))
        if soffice():  # smaller sources: .xls holds 65,536 rows per sheet; LibreOffice reads .doc/.ppt slowly
            sources = {"xls": work / "legacy.xlsx", "doc": work / "legacy.odt", "ppt": work / "legacy.pptx"}
            write_xlsx(sources["xls"], int(60_000 * scale), sheets=3)
            write_odt(sources["doc"], int(2_000 * scale))
            write_pptx(sources["ppt"], int(300 * scale))
            for fmt, source in sources.items():
                converted = convert(source, fmt, work)
                if converted:
                    files[fmt] = converted
        generate_s = time.perf_counter() - t0
        formats = {fmt: measure(path, 1 if fmt in ("doc", "ppt") else args.runs) for fmt, path in files.items()}
        t0 = time.perf_counter()
        cached = (CACHE / f"big-{args.big_mb}mb-v1.xlsx").is_file()
        big = big_xlsx(args.big_mb)
        big_generate_s = time.perf_counter() - t0
        imports_only = child_peak("")
        reading = child_peak(str(big))
        out = {
            "benchmark": "extract_formats", "cpus": os.cpu_count(),
            "load_avg": [round(x, 2) for x in os.getloadavg()],
            "generate_s": round(generate_s, 1), "libreoffice": bool(soffice()),
            "formats": formats,
            "big_xlsx": {"file_mb": round(big.stat().st_size / 1e6, 1), "cached": cached,
                         "generate_s": round(big_generate_s, 1),
                         "imports_only_peak_rss_mb": imports_only["children_peak_rss_mb"],
                         "extract_peak_rss_mb": reading["children_peak_rss_mb"],
                         "extract": reading, "goal_peak_rss_mb": 300},
        }
        text = json.dumps(out, indent=2)
        print(text)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
