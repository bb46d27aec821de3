"""CSV/TSV and JSON/JSON Lines as searchable "field: value" text.

Records become paragraphs (blank-line separated) so the chunker keeps a record together, and each
value carries its field name so both BM25 and the encoder see what a value means. CSV and JSON
Lines are streamed record by record up to ``max_chars``; a single JSON document must be parsed
whole, so it is only parsed below a size limit and otherwise indexed as plain text.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import IO, Any, Iterator, Union

from spar_desktop.core.documents.budget import SETTINGS_HINT, ExtractionBudget

from spar_desktop.core.documents.textio import open_text, read_text_file, sniff_file_encoding
from spar_desktop.core.documents.types import ExtractedDocument, PageText

MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 32  # deeper levels are written as compact JSON on one line
MAX_LEAF_CHARS = 2000  # a base64 blob in a JSON field is not worth a chunk of its own
_SNIFF_CHARS = 64 * 1024
MAX_LINE_CHARS = 1 << 20  # a CSV line longer than this is cut (no real record needs a million)
_CLOCK_ROWS = 1_000  # rows between clock checks


class _Sink:
    """Collects record paragraphs until ``max_chars``."""

    def __init__(self, max_chars: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.max_chars = max_chars
        self.truncated = False

    def add(self, record: str) -> bool:
        """Append a record; False once the limit is reached (callers stop reading)."""
        if not record:
            return True
        if self.size + len(record) > self.max_chars:
            room = self.max_chars - self.size
            if room > 0:
                self.parts.append(record[:room])
            self.truncated = True
            return False
        self.parts.append(record)
        self.size += len(record) + 2
        return True

    def document(self, fmt: str, warnings: list[str]) -> ExtractedDocument:
        if self.truncated:
            warnings.append(f"text truncated at {self.max_chars:,} characters")
        text = "\n\n".join(self.parts).strip()
        if not text:
            return ExtractedDocument((), fmt, None, tuple(warnings), "no records with text")
        return ExtractedDocument((PageText(1, text),), fmt, None, tuple(warnings))


def _one_line(value: str) -> str:
    return " ".join(value.split())


# ---------------------------------------------------------------------------------------- CSV


def extract_csv(path: Path, fmt: str, limits: Union[ExtractionBudget, int]) -> ExtractedDocument:
    budget = limits if isinstance(limits, ExtractionBudget) else ExtractionBudget(max_chars=limits)
    clock = budget.clock()
    encoding, warning = sniff_file_encoding(path)
    warnings = [warning] if warning else []
    sink = _Sink(budget.max_chars)
    max_columns = budget.max_columns
    lines = _BoundedLines(MAX_LINE_CHARS)
    with open_text(path, encoding, newline="") as f:  # newline="": csv handles quoted newlines
        delimiter = sniff_delimiter(f.read(_SNIFF_CHARS), fmt)
        f.seek(0)
        # csv.reader gets bounded lines, never the file's own iterator: a 200 MB file without a
        # line break would otherwise become one 200 MB string (and a list of its fields).
        reader = csv.reader(lines.read(f), delimiter=delimiter)
        header: list[str] = []
        header_width = 0
        ragged, first_ragged, row_no = 0, 0, 0
        wide, first_wide, bad, first_bad = 0, 0, 0, 0
        while True:
            row_no += 1
            if row_no % _CLOCK_ROWS == 0:
                clock.check()
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error:
                # A field over the csv module's size limit (or a stray quote): skip that row and
                # go on with the next line; memory stayed bounded by that limit.
                bad += 1
                first_bad = first_bad or row_no
                continue
            if len(row) > max_columns:
                wide += 1
                first_wide = first_wide or row_no
                if len(header) > max_columns and len(row) == len(header):
                    row = row[:max_columns]  # same shape as the (cut) header: not ragged
                    full = len(header)
                else:
                    full, row = len(row), row[:max_columns]
            else:
                full = len(row)
            if not any(cell.strip() for cell in row):
                continue
            if not header:
                header = [_one_line(h).lstrip("\ufeff") or f"column {i + 1}" for i, h in enumerate(row)]
                header_width = full
                continue
            if full != header_width:
                ragged += 1
                first_ragged = first_ragged or row_no
            names = header + [f"column {i + 1}" for i in range(len(header), len(row))]
            line = "; ".join(f"{n}: {_one_line(v)}" for n, v in zip(names, row) if v.strip())
            if not sink.add(line):
                break
    if ragged:
        warnings.append(
            f"{ragged} row(s) have a different number of fields than the header "
            f"({header_width}); first at row {first_ragged}"
        )
    if wide:
        warnings.append(
            f"{wide} row(s) have more than {max_columns:,} columns (first at row {first_wide}); "
            f"only the first {max_columns:,} were kept (the per-row column limit; {SETTINGS_HINT})"
        )
    if lines.cut:
        warnings.append(
            f"{lines.cut} line(s) are longer than {MAX_LINE_CHARS:,} characters (first at line "
            f"{lines.first_cut}); only their start was read"
        )
    if bad:
        warnings.append(
            f"{bad} row(s) could not be read (a field over {csv.field_size_limit():,} characters "
            f"or broken quoting; first at row {first_bad}) and were skipped"
        )
    if header and not sink.parts:  # header only: still searchable by column names
        sink.add("; ".join(header))
    return sink.document(fmt, warnings)


def extract_csv_file(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    """``extract_csv`` in the ``reader(path, budget)`` form."""
    return extract_csv(path, "csv", budget)


def extract_tsv_file(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    return extract_csv(path, "tsv", budget)


class _BoundedLines:
    """Physical lines of a text file, each at most ``limit`` characters.

    A longer line is cut: its start is yielded (with a line break, so the csv reader ends the
    record there) and the rest is skipped in bounded reads.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.cut = 0
        self.first_cut = 0

    def read(self, f: IO[str]) -> Iterator[str]:
        line_no = 0
        while True:
            line = f.readline(self.limit)
            if not line:
                return
            line_no += 1
            if len(line) >= self.limit and line[-1] not in "\r\n":
                self.cut += 1
                self.first_cut = self.first_cut or line_no
                while True:
                    rest = f.readline(self.limit)
                    if not rest or rest[-1] in "\r\n":
                        break
                line += "\n"
            yield line


def sniff_delimiter(sample: str, fmt: str) -> str:
    """The field separator of delimited text ``sample`` (one of , ; tab |); when it cannot be
    told, a tab for ``fmt`` 'tsv' and a comma otherwise."""
    default = "\t" if fmt == "tsv" else ","
    if not sample.strip():
        return default
    # Only sniff on complete lines, and only among real delimiters: csv.Sniffer otherwise
    # happily picks letters or spaces on free text.
    cut = sample.rfind("\n")
    sample = sample[:cut] if cut > 0 else sample
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return default


# --------------------------------------------------------------------------------------- JSON


def extract_json(path: Path, max_chars: int) -> ExtractedDocument:
    warnings: list[str] = []
    if path.stat().st_size > MAX_JSON_BYTES:
        return _as_text(path, max_chars, "json",
                        f"JSON larger than {MAX_JSON_BYTES // 2**20} MB; indexed as plain text")
    raw, read_warnings = read_text_file(path, MAX_JSON_BYTES + 1)  # chars <= bytes
    warnings.extend(read_warnings)
    try:
        data = json.loads(raw)
    except RecursionError:
        return _as_text(path, max_chars, "json", "JSON nested too deeply to parse; indexed as plain text")
    except ValueError as exc:
        records = _try_json_lines(raw)
        if records is None:
            return _as_text(path, max_chars, "json", f"not valid JSON ({exc}); indexed as plain text")
        data = records
        warnings.append("file holds JSON Lines, not one JSON document")
    del raw
    sink = _Sink(max_chars)
    state = {"deep": False}
    for record in data if isinstance(data, list) else [data]:
        if not sink.add("\n".join(flatten(record, state))):
            break
    if state["deep"]:
        warnings.append(f"nesting deeper than {MAX_DEPTH} levels was kept as compact JSON")
    return sink.document("json", warnings)


def extract_jsonl(path: Path, max_chars: int) -> ExtractedDocument:
    encoding, warning = sniff_file_encoding(path)
    warnings = [warning] if warning else []
    sink = _Sink(max_chars)
    state = {"deep": False}
    bad, first_bad = 0, 0
    with open_text(path, encoding) as f:
        for line_no, line in enumerate(f, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                record = "\n".join(flatten(json.loads(line), state))
            except (ValueError, RecursionError):
                bad += 1
                first_bad = first_bad or line_no
                record = line  # keep the raw line: its words are still worth finding
            if not sink.add(record):
                break
    if bad:
        warnings.append(f"{bad} line(s) are not valid JSON (first at line {first_bad}); kept as text")
    if state["deep"]:
        warnings.append(f"nesting deeper than {MAX_DEPTH} levels was kept as compact JSON")
    return sink.document("jsonl", warnings)


def _try_json_lines(raw: str) -> list[Any] | None:
    lines = [ln for ln in raw.splitlines() if ln.strip()]
    if len(lines) < 2:
        return None
    try:
        return [json.loads(ln) for ln in lines]
    except (ValueError, RecursionError):
        return None


def _as_text(path: Path, max_chars: int, fmt: str, why: str) -> ExtractedDocument:
    text, warnings = read_text_file(path, max_chars)
    text = text.strip()
    warnings.insert(0, why)
    if not text:
        return ExtractedDocument((), fmt, None, tuple(warnings), "file is empty")
    return ExtractedDocument((PageText(1, text),), fmt, None, tuple(warnings))


def flatten(value: Any, state: dict | None = None) -> Iterator[str]:
    """'a.b.c: value' lines for a JSON value, depth-first in document order.

    Iterative (explicit stack), so depth is bounded by MAX_DEPTH, not by Python's recursion
    limit. List indices are left out of paths ('authors.name', not 'authors.0.name'): they carry
    no meaning for search. Lists of scalars become one comma-separated line.
    """
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, val, depth = stack.pop()
        if isinstance(val, (dict, list)) and depth >= MAX_DEPTH:
            if state is not None:
                state["deep"] = True
            yield _line(path, _compact(val))
        elif isinstance(val, dict):
            for key, sub in reversed(list(val.items())):
                key = _one_line(str(key))
                stack.append((f"{path}.{key}" if path else key, sub, depth + 1))
        elif isinstance(val, list):
            if all(not isinstance(v, (dict, list)) for v in val):
                scalars = [_scalar(v) for v in val]
                if any(scalars):
                    yield _line(path, ", ".join(s for s in scalars if s))
            else:
                for sub in reversed(val):
                    stack.append((path, sub, depth + 1))
        else:
            text = _scalar(val)
            if text:
                yield _line(path, text)


def _scalar(val: Any) -> str:
    if val is None:
        return "null"
    if isinstance(val, bool):
        return "true" if val else "false"
    return _one_line(str(val))[:MAX_LEAF_CHARS]


def _line(path: str, text: str) -> str:
    return f"{path}: {text}" if path else text


def _compact(val: Any) -> str:
    try:
        return json.dumps(val, ensure_ascii=False, separators=(",", ":"))[:MAX_LEAF_CHARS]
    except (RecursionError, ValueError):
        return "[nested too deeply]"
