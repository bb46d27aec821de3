"""Importing and exporting tag hierarchies, and file→tag assignments from a DMS export.

Formats:
- JSON tree: a list (or one object) of {"name", "description"?, "children"?: [...]}, or a
  nested mapping {"Term": {"Child": {}}}.
- CSV parent/child: columns parent, child[, description]; an empty parent makes a root.
- MeSH-style tree numbers: CSV/TSV with columns term, tree_number[s][, description]; 'C04.557' is
  a child of 'C04'; a term may sit at several positions ('C04.557;C04.588' or repeated rows).
Cycles, duplicates and unknown parents are reported and skipped; the rest is imported.
Files come from other systems: anything unreadable (deep nesting, huge numbers, broken CSV
quoting, oversized fields) is a TaxonomyError with a message; a term or description no database
can store (NUL, an unpaired surrogate, a value that is not text) is reported and skipped.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from sqlalchemy import select
from sqlalchemy.orm import Session

from spar_desktop.core.library.models import File, Folder, Tag, TagEdge, TagSource
from spar_desktop.core.library.paths import normalize_root
from spar_desktop.core.library.tags import TagError, add_edge, create_tag, resolve_tags, tag_files

MAX_TAXONOMY_BYTES = 64 * 1024 * 1024


class TaxonomyError(ValueError):
    """The taxonomy file cannot be read at all (format, encoding, size)."""


@dataclass
class TaxonomyImportReport:
    tags_created: int = 0
    tags_existing: int = 0
    edges_created: int = 0
    duplicates: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass
class AssignReport:
    assigned: int = 0
    files_matched: int = 0
    tags_created: int = 0
    unknown_paths: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def taxonomy_key(name: str) -> str:
    return f"tax:{name.strip()}"


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_TAXONOMY_BYTES:
            raise TaxonomyError(f"{path} is {size // 1_000_000} MB; taxonomy files are limited to 64 MB")
        raw = path.read_bytes()
    except OSError as exc:
        raise TaxonomyError(f"cannot read {path}: {exc.strerror or exc}") from exc
    for enc in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    raise TaxonomyError(f"{path} is not text")


def _csv_rows(text: str, dialect: type[csv.Dialect] = csv.excel) -> list[list[str]]:
    """Every row, or TaxonomyError naming the line (newline='' lets a quoted cell hold a line
    break and a lone CR end a line, as csv expects)."""
    reader = csv.reader(io.StringIO(text, newline=""), dialect=dialect)
    try:
        return list(reader)
    except csv.Error as exc:  # e.g. a cell over the csv module's 128 KiB field limit
        raise TaxonomyError(f"line {reader.line_num}: cannot read the CSV ({exc})") from exc


def _cut(text: object, limit: int = 80) -> str:
    """A term or tree number as a problem line quotes it: a 100 KB cell must not become one."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def _storable(text: str) -> bool:
    """No database stores NUL or an unpaired surrogate (a '\\udc80' JSON escape)."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _drop_unstorable(terms: list[tuple[str, Optional[str]]], edges: list[tuple[str, str]],
                     problems: list[str]) -> tuple[list[tuple[str, Optional[str]]], list[tuple[str, str]], list[str]]:
    bad = {t for t, _ in terms if not _storable(t)}
    for t in bad:
        problems.append(f"the term {_cut(ascii(t))} holds a NUL or an undecodable character: skipped")
    kept = []
    for t, desc in terms:
        if t in bad:
            continue
        if desc is not None and not _storable(desc):
            problems.append(f"the description of '{_cut(t)}' holds a NUL or an undecodable character: ignored")
            desc = None
        kept.append((t, desc))
    return kept, [(p, c) for p, c in edges if p not in bad and c not in bad], problems


def detect_format(path: Path, text: str) -> str:
    if path.suffix.lower() == ".json" or text.lstrip().startswith(("{", "[")):
        return "json"
    first = text.splitlines()[0].lower() if text.strip() else ""
    if "tree" in first:
        return "mesh"
    return "csv"


def parse_taxonomy(text: str, fmt: str) -> tuple[list[tuple[str, Optional[str]]], list[tuple[str, str]], list[str]]:
    """Return (terms with descriptions, parent→child edges, problems) without touching the index."""
    if fmt == "json":
        return _drop_unstorable(*_parse_json(text))
    rows = _csv_rows(text, csv.excel_tab if "\t" in text.split("\n", 1)[0] else csv.excel)
    if not rows:
        return [], [], ["the file is empty"]
    return _drop_unstorable(*(_parse_mesh(rows) if fmt == "mesh" else _parse_csv(rows)))


def _parse_json(text: str):
    try:
        data = json.loads(text)
    except RecursionError as exc:
        raise TaxonomyError("not valid JSON: nested too deeply") from exc
    except ValueError as exc:  # JSONDecodeError, or a number over Python's 4,300-digit limit
        raise TaxonomyError(f"not valid JSON: {exc}") from exc
    terms: dict[str, Optional[str]] = {}
    edges: list[tuple[str, str]] = []
    problems: list[str] = []
    stack: list[tuple[object, Optional[str], int]] = [(data, None, 0)]
    while stack:  # iterative: a deep taxonomy must not hit the recursion limit
        node, parent, depth = stack.pop()
        if depth > 64:
            problems.append(f"deeper than 64 levels below '{_cut(parent)}': cut there")
            continue
        if isinstance(node, list):
            stack.extend((n, parent, depth) for n in reversed(node))
        elif isinstance(node, dict) and ("name" in node or "value" in node):
            raw = node.get("name") or node.get("value") or ""
            name = str(raw).strip() if isinstance(raw, (str, int, float)) and not isinstance(raw, bool) else ""
            if not name:
                problems.append("a node without a name (or whose name is not text) was skipped")
                continue
            desc = node.get("description")
            if desc is not None and not isinstance(desc, str):
                problems.append(f"the description of '{_cut(name)}' is not text: ignored")
                desc = None
            if name not in terms or not terms[name]:
                terms[name] = desc
            if parent:
                edges.append((parent, name))
            stack.append((node.get("children") or [], name, depth + 1))
        elif isinstance(node, dict):
            for name, children in node.items():
                name = name.strip()
                if not name:
                    problems.append("an empty term was skipped")
                    continue
                terms.setdefault(name, None)
                if parent:
                    edges.append((parent, name))
                stack.append((children or [], name, depth + 1))
        elif isinstance(node, str) and node.strip():
            terms.setdefault(node.strip(), None)
            if parent:
                edges.append((parent, node.strip()))
    return list(terms.items()), edges, problems


def _header_index(header: list[str], *names: str) -> Optional[int]:
    low = [h.strip().lower() for h in header]
    for n in names:
        if n in low:
            return low.index(n)
    return None


def _parse_csv(rows: list[list[str]]):
    header = rows[0]
    pi, ci, di = _header_index(header, "parent"), _header_index(header, "child", "tag", "term"), _header_index(header, "description")
    body = rows[1:]
    if pi is None or ci is None:
        pi, ci, di, body = 0, 1, 2 if len(header) > 2 else None, rows  # headerless parent,child
    terms: dict[str, Optional[str]] = {}
    edges, problems = [], []
    for n, row in enumerate(body, start=2 if body is not rows else 1):
        if len(row) <= ci or not row[ci].strip():
            if any(c.strip() for c in row):
                problems.append(f"line {n}: no child term")
            continue
        child = row[ci].strip()
        parent = row[pi].strip() if len(row) > pi else ""
        desc = row[di].strip() if di is not None and len(row) > di and row[di].strip() else None
        if desc or child not in terms:
            terms[child] = desc or terms.get(child)
        if parent:
            terms.setdefault(parent, None)
            edges.append((parent, child))
    return list(terms.items()), edges, problems


def _parse_mesh(rows: list[list[str]]):
    header = rows[0]
    ti = _header_index(header, "term", "name", "descriptor", "tag")
    ni = _header_index(header, "tree_number", "tree_numbers", "tree number", "tree numbers", "treenumber")
    di = _header_index(header, "description", "scope_note")
    if ti is None or ni is None:
        raise TaxonomyError("a tree-number file needs 'term' and 'tree_number' columns")
    terms: dict[str, Optional[str]] = {}
    by_number: dict[str, str] = {}
    problems = []
    for n, row in enumerate(rows[1:], start=2):
        if len(row) <= max(ti, ni):
            problems.append(f"line {n}: missing columns")
            continue
        term = row[ti].strip()
        if not term:
            continue
        desc = row[di].strip() if di is not None and len(row) > di and row[di].strip() else None
        terms[term] = desc or terms.get(term)
        for number in row[ni].replace("|", ";").replace(",", ";").split(";"):
            number = number.strip()
            if not number:
                continue
            if number in by_number and by_number[number] != term:
                problems.append(f"line {n}: tree number {_cut(number)} already belongs to '{_cut(by_number[number])}'")
                continue
            by_number[number] = term
    edges = []
    for number, term in sorted(by_number.items()):
        if "." not in number:
            continue
        parent_number = number.rsplit(".", 1)[0]
        parent = by_number.get(parent_number)
        while parent is None and "." in parent_number:  # attach to the nearest known ancestor
            parent_number = parent_number.rsplit(".", 1)[0]
            parent = by_number.get(parent_number)
        if parent is None:
            problems.append(f"'{_cut(term)}' ({_cut(number)}): unknown parent {_cut(number.rsplit('.', 1)[0])}; "
                            "imported as a root")
            continue
        if parent_number != number.rsplit(".", 1)[0]:
            problems.append(f"'{_cut(term)}' ({_cut(number)}): parent {_cut(number.rsplit('.', 1)[0])} unknown; "
                            f"attached to {_cut(parent_number)}")
        edges.append((parent, term))
    return list(terms.items()), edges, problems


def import_taxonomy(session: Session, path: str | Path, fmt: Optional[str] = None) -> TaxonomyImportReport:
    path = Path(path)
    text = _read_text(path)
    fmt = fmt or detect_format(path, text)
    if fmt not in ("json", "csv", "mesh"):
        raise TaxonomyError(f"unknown taxonomy format '{fmt}' (json, csv or mesh)")
    terms, edges, problems = parse_taxonomy(text, fmt)
    report = TaxonomyImportReport(problems=list(problems))
    ids: dict[str, int] = {}
    for name, desc in terms:
        existing = session.scalar(select(Tag.id).where(Tag.key == taxonomy_key(name)))
        tag = create_tag(session, taxonomy_key(name), name, TagSource.TAXONOMY, desc)
        ids[name] = tag.id
        if existing:
            report.tags_existing += 1
        else:
            report.tags_created += 1
    seen: set[tuple[str, str]] = set()
    for parent, child in edges:
        if (parent, child) in seen:
            report.duplicates += 1
            continue
        seen.add((parent, child))
        try:
            if add_edge(session, ids[parent], ids[child]):
                report.edges_created += 1
            else:
                report.duplicates += 1
        except TagError:
            report.problems.append(f"'{_cut(parent)}' → '{_cut(child)}' would create a cycle; edge skipped")
    return report


def export_taxonomy(session: Session, sources: tuple[str, ...] = (TagSource.TAXONOMY, TagSource.USER)) -> list[dict]:
    """The chosen sources' tags as a JSON tree (a term under two parents appears under both)."""
    tags = {t.id: t for t in session.scalars(select(Tag).where(Tag.source.in_(sources)))}
    children: dict[int, list[int]] = defaultdict(list)
    has_parent: set[int] = set()
    for p, c in session.execute(select(TagEdge.parent_id, TagEdge.child_id)):
        if p in tags and c in tags:
            children[p].append(c)
            has_parent.add(c)

    def node(tag_id: int, depth: int) -> dict:
        t = tags[tag_id]
        out: dict = {"name": t.value}
        if t.description:
            out["description"] = t.description
        kids = sorted(children.get(tag_id, ()), key=lambda i: tags[i].value)
        if kids and depth < 64:
            out["children"] = [node(k, depth + 1) for k in kids]
        return out

    return [node(i, 0) for i in sorted(set(tags) - has_parent, key=lambda i: tags[i].value)]


def assign_from_csv(session: Session, csv_path: str | Path, base_dir: Optional[str] = None) -> AssignReport:
    """Rows 'path, tag[, tag...]'. Paths may be absolute, or relative to ``base_dir`` or any root."""
    text = _read_text(Path(csv_path))
    report = AssignReport()
    rows = _csv_rows(text)
    if rows and rows[0] and rows[0][0].strip().lower() in ("path", "file", "filename"):
        rows = rows[1:]
    roots = [r.path for r in session.scalars(select(Folder))]
    bases = ([normalize_root(base_dir)] if base_dir else []) + roots
    tag_cache: dict[str, list[int]] = {}
    for n, row in enumerate(rows, start=1):
        cells = [c.strip() for c in row if c.strip()]
        if not cells:
            continue
        if len(cells) < 2:
            report.problems.append(f"line {n}: no tag for {_cut(cells[0])}")
            continue
        file_id = _find_file(session, cells[0], bases)
        if file_id is None:
            report.unknown_paths.append(cells[0])
            continue
        report.files_matched += 1
        for name in cells[1:]:
            if not _storable(name):
                report.problems.append(f"line {n}: the tag {_cut(ascii(name))} holds a NUL character: skipped")
                continue
            if name not in tag_cache:
                found = resolve_tags(session, name)
                if not found:
                    found = [create_tag(session, taxonomy_key(name), name, TagSource.TAXONOMY)]
                    report.tags_created += 1
                tag_cache[name] = [t.id for t in found]
            for tag_id in tag_cache[name]:
                report.assigned += tag_files(session, [file_id], tag_id, TagSource.TAXONOMY, 1.0, True)
    return report


def _find_file(session: Session, given: str, bases: list[str]) -> Optional[int]:
    given = given.replace("\\", "/")
    candidates = [given] if os.path.isabs(given) else []
    candidates += [os.path.join(b, given) for b in bases]
    for c in candidates:
        fid = session.scalar(select(File.id).where(File.path == os.path.normpath(c)))
        if fid is not None:
            return fid
    if not os.path.isabs(given):
        return session.scalar(select(File.id).where(File.rel_path == given.strip("/")).limit(1))
    return None
