"""Plain text, Markdown and HTML extraction (single page each)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents.textio import read_text_file
from spar_desktop.core.documents.types import ExtractedDocument, PageText

# Markup must be parsed whole; beyond this we parse a prefix (BeautifulSoup tolerates the cut)
# rather than letting a multi-GB export take the machine's memory.
MAX_MARKUP_BYTES = 64 * 1024 * 1024

_ATX_RE = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_SETEXT_RE = re.compile(r"^(\S[^\n]*)\n[ ]{0,3}=+[ \t]*$", re.M)


def _single_page(text: str, fmt: str, title: Optional[str], warnings: list[str],
                 empty_reason: str = "file is empty") -> ExtractedDocument:
    text = text.strip()
    if not text:
        return ExtractedDocument((), fmt, title, tuple(warnings), empty_reason)
    return ExtractedDocument((PageText(1, text),), fmt, title, tuple(warnings))


def extract_txt(path: Path, max_chars: int) -> ExtractedDocument:
    text, warnings = read_text_file(path, max_chars)
    return _single_page(text, "txt", None, warnings)


def extract_md(path: Path, max_chars: int) -> ExtractedDocument:
    """Markdown is kept verbatim: its syntax is light and headings/lists help chunking."""
    text, warnings = read_text_file(path, max_chars)
    return _single_page(text, "md", markdown_title(text), warnings)


def markdown_title(text: str) -> Optional[str]:
    """The first heading (ATX '# x' or setext 'x\\n==='), looked for near the top only."""
    head = text[:20_000]
    found = [m for m in (_ATX_RE.search(head), _SETEXT_RE.search(head)) if m]
    if not found:
        return None
    return min(found, key=lambda m: m.start()).group(1).strip() or None


# Block elements start a new paragraph (blank line) or line; everything else is inline text.
_PARA_TAGS = ("p", "div", "section", "article", "main", "header", "footer", "aside", "nav",
              "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "dl", "pre",
              "blockquote", "figure", "form", "fieldset", "address", "details", "hr")
_LINE_TAGS = ("br", "li", "tr", "dt", "dd", "caption", "figcaption", "summary", "option")
_CELL_TAGS = ("td", "th")
_INVISIBLE_TAGS = ("script", "style", "noscript", "template", "svg", "canvas", "iframe",
                   "object", "embed", "head", "meta", "link")
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def extract_html(path: Path, max_chars: int) -> ExtractedDocument:
    warnings: list[str] = []
    with open(path, "rb") as f:
        data = f.read(MAX_MARKUP_BYTES + 1)
    if len(data) > MAX_MARKUP_BYTES:
        data = data[:MAX_MARKUP_BYTES]
        warnings.append(f"HTML larger than {MAX_MARKUP_BYTES // 2**20} MB; only its start was read")
    title, text = html_to_text(data)
    if len(text) > max_chars:
        text = text[:max_chars]
        warnings.append(f"text truncated at {max_chars:,} characters")
    return _single_page(text, "html", title, warnings, "HTML has no visible text")


def html_to_text(data: bytes | str) -> tuple[Optional[str], str]:
    """(title, visible text) of an HTML document."""
    from bs4 import BeautifulSoup  # lazy: only HTML needs it

    try:
        soup = BeautifulSoup(data, "lxml")
    except Exception:  # lxml missing or refused the bytes: the stdlib parser is slower but safe
        soup = BeautifulSoup(data, "html.parser")
    title_tag = soup.find("title")
    title = (" ".join(title_tag.get_text().split()) or None) if title_tag else None
    for tag in soup.find_all(_INVISIBLE_TAGS):
        tag.decompose()
    for tag in soup.find_all(True):
        if getattr(tag, "decomposed", False) or tag.attrs is None:
            continue
        if tag.has_attr("hidden") or _HIDDEN_STYLE_RE.search(str(tag.get("style") or "")):
            tag.decompose()
    # Mark block boundaries with sentinels that survive get_text(); inline tags (<b>, <a>,
    # <span>) add nothing, so "<b>bo</b>ld" stays one word.
    for tag in soup.find_all(_PARA_TAGS):
        tag.insert_before("\u0002")
        tag.insert_after("\u0002")
    for tag in soup.find_all(_LINE_TAGS):
        tag.insert_before("\u0001")
        if tag.name == "br":
            continue
        tag.insert_after("\u0001")
    for tag in soup.find_all(_CELL_TAGS):
        tag.insert_after(" | ")
    return title, _normalise_blocks(soup.get_text())


def _normalise_blocks(raw: str) -> str:
    """Collapse source whitespace, then turn sentinels into line / paragraph breaks."""
    raw = re.sub(r"\s+", " ", raw)
    raw = re.sub(r"(?: ?\|)+ ?(?=[\u0001\u0002]|$)", "", raw)  # trailing cell separators
    out_paras = []
    for para in raw.split("\u0002"):
        lines = [ln.strip() for ln in para.split("\u0001")]
        text = "\n".join(ln for ln in lines if ln)
        if text:
            out_paras.append(text)
    return "\n\n".join(out_paras)
