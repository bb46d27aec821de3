"""Where a filter's constraints came from — the rules, the language model or both — and dropping
one. A filter (or parsed request) carries ``sources``: (kind, value, source) triples, empty when
the rules alone read its request; then nothing is labelled and explanations read as before.

Kinds and values, as the CLI's ``--drop-constraint KIND:VALUE`` takes them: ``keyword:<phrase>``,
``dates:<since>..<until>`` (either side may be empty), ``type:<format>``, ``author:<name>``,
``folder:<name>``; a bare ``KIND`` drops every constraint of that kind.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from typing import Any, Optional, Sequence

KINDS = ("keyword", "dates", "type", "author", "folder")
Sources = Sequence[Sequence[str]]


def dates_value(since: Optional[date], until: Optional[date]) -> str:
    return f"{since or ''}..{until or ''}"


def sources_from_json(value: Any) -> tuple[tuple[str, str, str], ...]:
    """Saved sources, keeping only well-formed triples (a .sparws may carry anything)."""
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple((str(s[0]), str(s[1]), str(s[2])) for s in value if isinstance(s, (list, tuple)) and len(s) == 3)


def source_of(sources: Sources, kind: str, value: str) -> Optional[str]:
    value = value.lower()
    return next((s for k, v, s in sources if k == kind and v.lower() == value), None)


def source_suffix(sources: Sources, kind: str, value: str) -> str:
    """' (model)', ' (rules)', ' (rules+model)', or '' (no model took part, or the user set it)."""
    src = source_of(sources, kind, value)
    return f" ({src})" if src else ""


def sources_suffix(sources: Sources, kind: str, values: Sequence[str]) -> str:
    """One label for several values of a kind when they share it ('csv, xlsx (rules)'), else each's."""
    found = {source_of(sources, kind, v) for v in values}
    if len(found) == 1:
        (one,) = found
        return f" ({one})" if one else ""
    return " (" + ", ".join(f"{v}: {source_of(sources, kind, v) or 'you'}" for v in values) + ")"


def group_source(sources: Sources, label: str) -> str:
    """The source suffix of a tag group's funnel line ('folder X' groups come from folders)."""
    if label.startswith("folder "):
        return source_suffix(sources, "folder", label[7:])
    return source_suffix(sources, "keyword", label)


def dates_source(sources: Sources, since: Optional[date], until: Optional[date]) -> str:
    return source_suffix(sources, "dates", dates_value(since, until))


def constraints(flt: Any) -> list[tuple[str, str, str]]:
    """Every droppable constraint of a filter (or parsed request) now: (kind, value, source)."""
    src = tuple(getattr(flt, "sources", ()))
    out: list[tuple[str, str, str]] = []
    labels = [g.label for g in getattr(flt, "groups", ())] + list(getattr(flt, "unmatched", ()))
    labels += list(getattr(flt, "keywords", ()))
    for label in dict.fromkeys(labels):
        kind, value = ("folder", label[7:]) if label.startswith("folder ") else ("keyword", label)
        out.append((kind, value, source_of(src, kind, value) or ""))
    for folder in getattr(flt, "folders", ()):
        out.append(("folder", folder, source_of(src, "folder", folder) or ""))
    if flt.since or flt.until:
        v = dates_value(flt.since, flt.until)
        out.append(("dates", v, source_of(src, "dates", v) or ""))
    out += [("type", f, source_of(src, "type", f) or "") for f in flt.formats]
    out += [("author", a, source_of(src, "author", a) or "") for a in flt.authors]
    return out


def parse_spec(spec: str) -> tuple[str, Optional[str]]:
    """'type:pdf' → ('type', 'pdf'); 'dates' → ('dates', None). ValueError for an unknown kind."""
    kind, sep, value = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise ValueError(f"unknown constraint kind '{kind}' in '{spec}': use one of {', '.join(KINDS)} (KIND:VALUE)")
    return kind, (value.strip() or None) if sep else None


def drop_constraint(flt: Any, spec: str) -> Any:
    """``flt`` (a WorkspaceFilter) without the constraint ``spec`` names, with a note saying so.
    ValueError when it has no such constraint (listing those it has)."""
    kind, value = parse_spec(spec)
    hits = [c for c in constraints(flt) if c[0] == kind and (value is None or c[1].lower() == value.lower())]
    if not hits:
        have = ", ".join(f"{k}:{v}" for k, v, _s in constraints(flt)) or "none"
        raise ValueError(f"the filter has no constraint '{spec}' (it has: {have})")
    for k, v, _s in hits:
        flt = _without(flt, k, v)
    gone = {(k, v.lower()) for k, v, _s in hits}
    notes = tuple(flt.notes) + tuple(f"you dropped {k} '{v}'" + (f" (from the {s})" if s else "") for k, v, s in hits)
    return replace(flt, notes=notes, sources=tuple(s for s in flt.sources if (s[0], s[1].lower()) not in gone))


def _without(flt: Any, kind: str, value: str) -> Any:
    low = value.lower()
    if kind in ("keyword", "folder"):
        label = low if kind == "keyword" else f"folder {low}"
        return replace(flt, groups=tuple(g for g in flt.groups if g.label.lower() != label),
                       dropped=tuple(g for g in flt.dropped if g.label.lower() != label),
                       unmatched=tuple(u for u in flt.unmatched if u.lower() != label))
    if kind == "dates":
        return replace(flt, since=None, until=None)
    if kind == "type":
        return replace(flt, formats=tuple(f for f in flt.formats if f.lower() != low))
    return replace(flt, authors=tuple(a for a in flt.authors if a.lower() != low))
