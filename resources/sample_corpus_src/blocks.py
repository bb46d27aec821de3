"""A tiny document model (pages of blocks) and one writer per output format.

A document is a list of pages; a page is a list of blocks. Blocks are tuples built with the
helpers below, so the content modules read like an outline:

    H1("Incident Report"), META([("Ref", "IR-2023-007"), ...]), P("..."), UL([...]), TABLE([...])

Writers: PDF (pymupdf, one logical page per PDF page), DOCX (python-docx, page breaks between
logical pages), Markdown, plain text and HTML. All writers are deterministic: fixed metadata
dates, no random ids, fixed zip timestamps.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import textwrap
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

COMPANY = "Northwind Renewables Ltd"


# ---------------------------------------------------------------------------------------------
# block helpers
# ---------------------------------------------------------------------------------------------
def H1(text: str):
    return ("h1", text)


def H2(text: str):
    return ("h2", text)


def H3(text: str):
    return ("h3", text)


def P(text: str):
    return ("p", " ".join(text.split()))


def UL(items):
    return ("ul", [" ".join(i.split()) for i in items])


def OL(items):
    return ("ol", [" ".join(i.split()) for i in items])


def TABLE(rows):
    """First row is the header."""
    return ("table", [[str(c) for c in r] for r in rows])


def META(pairs):
    """Key/value document-control block (reference, author, date, ...)."""
    return ("meta", [(str(k), str(v)) for k, v in pairs])


@dataclass
class Doc:
    """A text document. The format is taken from the path's extension."""

    path: str  # relative, forward slashes
    date: dt.date  # document date -> PDF/DOCX metadata and file mtime
    title: str
    author: str
    pages: list  # list of pages, each a list of blocks
    subject: str = ""
    keywords: str = ""
    encoding: str = "utf-8"  # .txt/.md only, e.g. cp1252 for a legacy file
    newline: str = "\n"
    header: str = ""  # running header on PDF pages (defaults to company + title)


@dataclass
class Raw:
    """A file whose bytes are produced directly (CSV, JSON, awkward files)."""

    path: str
    date: dt.date
    data: bytes = field(repr=False)


# ---------------------------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------------------------
PDF_CSS = """
* { font-family: sans-serif; }
body { font-size: 10.5pt; line-height: 1.3; color: #1a1a1a; }
h1 { font-size: 16pt; color: #12355b; margin-top: 0; margin-bottom: 6pt; }
h2 { font-size: 12.5pt; color: #12355b; margin-top: 9pt; margin-bottom: 3pt; }
h3 { font-size: 11pt; color: #2b4d6e; margin-top: 7pt; margin-bottom: 2pt; }
p { margin-top: 0; margin-bottom: 5pt; text-align: justify; }
ul, ol { margin-top: 0; margin-bottom: 5pt; }
li { margin-bottom: 2pt; }
table { border-collapse: collapse; width: 100%; margin-bottom: 6pt; }
td, th { border: 0.5pt solid #8a9bb0; padding: 2pt 4pt; font-size: 9.5pt; text-align: left; }
th { background-color: #dde6f0; }
p.meta { margin-bottom: 1pt; font-size: 9.5pt; text-align: left; }
p.meta b { color: #12355b; }
div.metabox { margin-bottom: 8pt; padding: 4pt; background-color: #f2f5f9; }
"""


def _e(s: str) -> str:
    return html.escape(s, quote=False)


def blocks_to_html(blocks) -> str:
    out = []
    for kind, val in blocks:
        if kind in ("h1", "h2", "h3"):
            out.append(f"<{kind}>{_e(val)}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{_e(val)}</p>")
        elif kind in ("ul", "ol"):
            items = "".join(f"<li>{_e(i)}</li>" for i in val)
            out.append(f"<{kind}>{items}</{kind}>")
        elif kind == "table":
            head = "".join(f"<th>{_e(c)}</th>" for c in val[0])
            body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>" for r in val[1:])
            out.append(f"<table><tr>{head}</tr>{body}</table>")
        elif kind == "meta":
            rows = "".join(f'<p class="meta"><b>{_e(k)}:</b> {_e(v)}</p>' for k, v in val)
            out.append(f'<div class="metabox">{rows}</div>')
        else:
            raise ValueError(kind)
    return "\n".join(out)


def _pdf_date(d: dt.date) -> str:
    return f"D:{d:%Y%m%d}090000+00'00'"


def write_pdf(doc: Doc, out: Path) -> None:
    out.write_bytes(pdf_bytes(doc))


def pdf_bytes(doc: Doc) -> bytes:
    import pymupdf

    pdf = pymupdf.open()
    n = len(doc.pages)
    header = (doc.header or f"{COMPANY} | {doc.title}").replace("\u2013", "-").replace("\u2014", "-")
    for i, blocks in enumerate(doc.pages, 1):
        page = pdf.new_page(width=595, height=842)  # A4
        page.insert_text((56, 40), header, fontname="helv", fontsize=8, color=(0.35, 0.42, 0.5))
        page.draw_line((56, 48), (539, 48), color=(0.55, 0.63, 0.72), width=0.6)
        spare, scale = page.insert_htmlbox(
            pymupdf.Rect(56, 62, 539, 782), blocks_to_html(blocks), css=PDF_CSS, scale_low=0
        )
        if scale < 0.75:
            raise ValueError(f"{doc.path} page {i}: too much text (scaled to {scale:.2f})")
        page.draw_line((56, 796), (539, 796), color=(0.55, 0.63, 0.72), width=0.6)
        page.insert_text((56, 808), f"{COMPANY} - internal", fontname="helv", fontsize=8, color=(0.35, 0.42, 0.5))
        page.insert_text((490, 808), f"Page {i} of {n}", fontname="helv", fontsize=8, color=(0.35, 0.42, 0.5))
    pdf.set_metadata(
        {
            "title": doc.title,
            "author": doc.author,
            "subject": doc.subject,
            "keywords": doc.keywords,
            "creator": "Microsoft Word",
            "producer": "SPAR sample corpus generator (PyMuPDF)",
            "creationDate": _pdf_date(doc.date),
            "modDate": _pdf_date(doc.date),
        }
    )
    pdf.subset_fonts()
    data = pdf.tobytes(garbage=3, deflate=True, no_new_id=True)
    pdf.close()
    return data


# ---------------------------------------------------------------------------------------------
# DOCX
# ---------------------------------------------------------------------------------------------
def _fixed_zip(data: bytes, when: dt.date) -> bytes:
    """Rewrite a zip with fixed member timestamps so output bytes are reproducible."""
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            zi = zipfile.ZipInfo(info.filename, date_time=(when.year, when.month, when.day, 9, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            dst.writestr(zi, src.read(info.filename))
    return buf.getvalue()


def write_docx(doc: Doc, out: Path) -> None:
    out.write_bytes(docx_bytes(doc))


def docx_bytes(doc: Doc) -> bytes:
    import docx
    from docx.shared import Pt, RGBColor

    d = docx.Document()
    style = d.styles["Normal"]
    style.font.name = "Calibri"
    style.font.size = Pt(10.5)
    when = dt.datetime(doc.date.year, doc.date.month, doc.date.day, 9, 0, 0)
    cp = d.core_properties
    cp.title = doc.title
    cp.author = doc.author
    cp.last_modified_by = doc.author
    cp.subject = doc.subject
    cp.keywords = doc.keywords
    cp.created = when
    cp.modified = when
    cp.last_printed = when
    cp.revision = 1
    cp.comments = ""
    cp.category = ""
    for i, blocks in enumerate(doc.pages):
        if i:
            d.add_page_break()
        for kind, val in blocks:
            if kind in ("h1", "h2", "h3"):
                d.add_heading(val, level=int(kind[1]))
            elif kind == "p":
                d.add_paragraph(val)
            elif kind == "ul":
                for item in val:
                    d.add_paragraph(item, style="List Bullet")
            elif kind == "ol":
                for item in val:
                    d.add_paragraph(item, style="List Number")
            elif kind in ("table", "meta"):
                rows = val if kind == "table" else [list(kv) for kv in val]
                t = d.add_table(rows=len(rows), cols=len(rows[0]))
                t.style = "Table Grid" if kind == "table" else None
                for r, row in enumerate(rows):
                    for c, text in enumerate(row):
                        cell = t.cell(r, c)
                        cell.text = text
                        bold = (kind == "table" and r == 0) or (kind == "meta" and c == 0)
                        if bold:
                            for run in cell.paragraphs[0].runs:
                                run.font.bold = True
                                if kind == "meta":
                                    run.font.color.rgb = RGBColor(0x12, 0x35, 0x5B)
                d.add_paragraph("")
            else:
                raise ValueError(kind)
    buf = io.BytesIO()
    d.save(buf)
    return _fixed_zip(buf.getvalue(), doc.date)


# ---------------------------------------------------------------------------------------------
# Markdown / text / HTML
# ---------------------------------------------------------------------------------------------
def _md_cell(s: str) -> str:
    return s.replace("|", "\\|")


def blocks_to_md(pages) -> str:
    out = []
    for blocks in pages:
        for kind, val in blocks:
            if kind in ("h1", "h2", "h3"):
                out.append("#" * int(kind[1]) + " " + val)
            elif kind == "p":
                out.append(val)
            elif kind == "ul":
                out.append("\n".join(f"- {i}" for i in val))
            elif kind == "ol":
                out.append("\n".join(f"{n}. {i}" for n, i in enumerate(val, 1)))
            elif kind == "table":
                lines = ["| " + " | ".join(_md_cell(c) for c in val[0]) + " |"]
                lines.append("|" + "|".join("---" for _ in val[0]) + "|")
                lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in val[1:]]
                out.append("\n".join(lines))
            elif kind == "meta":
                out.append("  \n".join(f"**{k}:** {v}" for k, v in val))
    return "\n\n".join(out) + "\n"


def blocks_to_txt(pages, width: int = 78) -> str:
    out = []
    for blocks in pages:
        for kind, val in blocks:
            if kind == "h1":
                out.append(val.upper() + "\n" + "=" * min(len(val), width))
            elif kind == "h2":
                out.append(val + "\n" + "-" * min(len(val), width))
            elif kind == "h3":
                out.append(val)
            elif kind == "p":
                out.append(textwrap.fill(val, width))
            elif kind in ("ul", "ol"):
                lines = []
                for n, item in enumerate(val, 1):
                    bullet = "  * " if kind == "ul" else f"  {n}. "
                    lines.append(textwrap.fill(item, width, initial_indent=bullet, subsequent_indent=" " * len(bullet)))
                out.append("\n".join(lines))
            elif kind == "table":
                widths = [max(len(r[c]) for r in val) for c in range(len(val[0]))]
                fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
                lines = [fmt(val[0]), "  ".join("-" * w for w in widths)] + [fmt(r) for r in val[1:]]
                out.append("\n".join(lines))
            elif kind == "meta":
                kw = max(len(k) for k, _ in val) + 1
                out.append("\n".join(f"{(k + ':').ljust(kw)} {v}" for k, v in val))
    return "\n\n".join(out) + "\n"


def write_text(doc: Doc, out: Path) -> None:
    text = blocks_to_md(doc.pages) if out.suffix == ".md" else blocks_to_txt(doc.pages)
    out.write_bytes(text.replace("\n", doc.newline).encode(doc.encoding))


def write_doc(doc: Doc, out: Path) -> None:
    ext = out.suffix.lower()
    if ext == ".pdf":
        write_pdf(doc, out)
    elif ext == ".docx":
        write_docx(doc, out)
    elif ext in (".md", ".txt"):
        write_text(doc, out)
    else:
        raise ValueError(f"no writer for {doc.path}")
