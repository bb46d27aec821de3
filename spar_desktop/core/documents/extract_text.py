"""Plain text, Markdown and HTML extraction (single page each)."""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Optional, Union

from spar_desktop.core.documents.budget import DEFAULT_MAX_CHARS, ExtractionBudget
from spar_desktop.core.documents.textio import detect_encoding, read_text_file
from spar_desktop.core.documents.types import ExtractedDocument, PageText

# HTML is streamed, but a multi-GB export is still not worth minutes of parsing: beyond this
# only its start is read.
MAX_MARKUP_BYTES = 64 * 1024 * 1024
_FEED_BYTES = 1 << 20  # big blocks: html.parser re-scans an unfinished tag or comment per block
_FEED_CHARS = 1 << 20
_SNIFF_BYTES = 64 * 1024
_END_TAG_REACH = 64  # open tags an end tag may close (deeper stray end tags are ignored)

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
_VOID_TAGS = frozenset(("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                        "param", "source", "track", "wbr"))
_HEAD_TAGS = frozenset(("title", "meta", "link", "style", "script", "base", "noscript", "template"))
# A start tag that implicitly ends an open sibling (the common cases of HTML's optional end tags).
_IMPLIED_CLOSE = {"p": ("p",), "li": ("li",), "dt": ("dt", "dd"), "dd": ("dt", "dd"),
                  "tr": ("tr", "td", "th"), "td": ("td", "th"), "th": ("td", "th"),
                  "option": ("option",)}
_HIDDEN_STYLE_RE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def extract_html(path: Path, limits: Union[ExtractionBudget, int]) -> ExtractedDocument:
    budget = limits if isinstance(limits, ExtractionBudget) else ExtractionBudget(max_chars=limits)
    clock = budget.clock()
    warnings: list[str] = []
    with open(path, "rb") as f:
        head = f.read(_SNIFF_BYTES)
        decoder = codecs.getincrementaldecoder(html_encoding(head))(errors="replace")
        collector = _VisibleText(budget.max_chars)
        f.seek(0)
        read = 0
        # Fed in blocks: memory is one block plus the kept text, whatever the nesting or size.
        while not collector.full:
            clock.check()
            data = f.read(_FEED_BYTES)
            if not data:
                break
            if read + len(data) > MAX_MARKUP_BYTES:
                data = data[: MAX_MARKUP_BYTES - read]
                warnings.append(f"HTML larger than {MAX_MARKUP_BYTES // 2**20} MB; only its start was read")
            read += len(data)
            collector.feed(decoder.decode(data))
            if read >= MAX_MARKUP_BYTES:
                break
        collector.feed(decoder.decode(b"", final=True))
        collector.close()
    text = _normalise_blocks("".join(collector.parts))
    if collector.full or len(text) > budget.max_chars:
        text = text[: budget.max_chars]
        warnings.append(f"text truncated at {budget.max_chars:,} characters")
    return _single_page(text, "html", collector.title(), warnings, "HTML has no visible text")


def html_to_text(data: bytes | str, max_chars: Optional[int] = None) -> tuple[Optional[str], str]:
    """(title, visible text) of an HTML document, at most ``max_chars`` of it."""
    if isinstance(data, bytes):
        data = data.decode(html_encoding(data[:_SNIFF_BYTES]), errors="replace")
    collector = _VisibleText(max_chars if max_chars is not None else DEFAULT_MAX_CHARS)
    for i in range(0, len(data), _FEED_CHARS):
        collector.feed(data[i:i + _FEED_CHARS])
        if collector.full:
            break
    collector.close()
    text = _normalise_blocks("".join(collector.parts))
    return collector.title(), text[:max_chars] if max_chars is not None else text


_META_CHARSET_RE = re.compile(rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([A-Za-z0-9._:-]{1,40})""", re.I)


def html_encoding(head: bytes) -> str:
    """The encoding of an HTML file starting with ``head``: BOM, <meta charset>, else sniffed."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                     (codecs.BOM_UTF16_BE, "utf-16")):
        if head.startswith(bom):
            return enc
    match = _META_CHARSET_RE.search(head)
    if match:
        try:
            name = codecs.lookup(match.group(1).decode("ascii")).name
        except LookupError:
            name = ""
        if name:
            # Browsers read pages labelled Latin-1 as Windows-1252 (its superset); so do we.
            return "cp1252" if name in ("latin-1", "iso8859-1", "ascii") else name
    return detect_encoding(head)[0]


class _VisibleText(HTMLParser):
    """Visible text with block sentinels, streamed from html.parser events.

    No tree is built, so work is linear in the input whatever its nesting (BeautifulSoup's tree
    walk was worse than quadratic on 10,000 nested <div>s). A stack of open tags tells when a
    hidden subtree (script, style, hidden attribute, display:none) ends; an end tag only closes
    a tag among the innermost few, like browsers' recovery, so stray end tags cost no scan.
    """

    def __init__(self, max_chars: int) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.size = 0
        # Whitespace collapses and sentinels vanish later, so read a little past the limit.
        self.stop_at = max_chars + max_chars // 4 + 1000
        self.full = False
        self.open: list[str] = []
        self.hidden_at: Optional[int] = None  # stack depth of the outermost hidden element
        self.cell_open = False
        self.in_title = False
        self.title_parts: list[str] = []
        self.title_done = False

    def title(self) -> Optional[str]:
        return " ".join("".join(self.title_parts).split())[:1000] or None

    def _emit(self, text: str) -> None:
        if self.full or self.hidden_at is not None:
            return
        self.parts.append(text)
        self.size += len(text)
        if self.size > self.stop_at:
            self.full = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag == "title" and not self.title_done:
            self.in_title = True
        if (self.hidden_at is not None and self.open[self.hidden_at] == "head"
                and tag not in _HEAD_TAGS):
            self._close(self.hidden_at)  # body content after an unclosed <head> ends it
        if tag in _IMPLIED_CLOSE and self.open and self.open[-1] in _IMPLIED_CLOSE[tag]:
            self._close(len(self.open) - 1)  # <li>a<li>b: the first <li> ends here
        if tag in ("td", "th", "tr") or tag == "table":
            self._end_cell()
        if tag in _PARA_TAGS:
            self._emit("\u0002")
        elif tag in _LINE_TAGS:
            self._emit("\u0001")
        if tag in _VOID_TAGS:
            return
        self.open.append(tag)
        if self.hidden_at is None and (
                tag in _INVISIBLE_TAGS
                or any(name == "hidden" for name, _ in attrs)
                or any(name == "style" and value and _HIDDEN_STYLE_RE.search(value)
                       for name, value in attrs)):
            self.hidden_at = len(self.open) - 1
        if tag in _CELL_TAGS:
            self.cell_open = True

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID_TAGS:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title:
            self.in_title, self.title_done = False, True
        for depth in range(len(self.open) - 1, max(-1, len(self.open) - 1 - _END_TAG_REACH), -1):
            if self.open[depth] == tag:
                self._close(depth)
                return
        if tag == "br":  # </br> is read as <br> by browsers
            self._emit("\u0001")

    def _close(self, depth: int) -> None:
        """Close the open tag at ``depth`` and everything opened inside it."""
        while len(self.open) > depth:
            tag = self.open.pop()
            if self.hidden_at is not None and len(self.open) <= self.hidden_at:
                self.hidden_at = None
                continue  # nothing of a hidden element shows, not even its boundaries
            if tag in _CELL_TAGS:
                self._end_cell()
            if tag in _PARA_TAGS:
                self._emit("\u0002")
            elif tag in _LINE_TAGS:
                self._emit("\u0001")

    def _end_cell(self) -> None:
        if self.cell_open:
            self.cell_open = False
            self._emit(" | ")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            if sum(map(len, self.title_parts)) < 1000:
                self.title_parts.append(data)
            return
        self._emit(data)


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
