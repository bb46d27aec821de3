"""Readable tag lists for explanations: a keyword that matches hundreds of same-named folders
('reports' under every project and year) is one entry, "912 folders named 'reports', 0.70
exact", instead of a line no one can read. The filter itself and its JSON keep every tag."""

from __future__ import annotations

from typing import Protocol, Sequence

# Tags sharing a label (and score and how) with at least this many others are shown as one entry.
COLLAPSE_AT = 4
MAX_ENTRIES = 8  # entries shown per keyword; the rest are counted


class _Tag(Protocol):
    tag_id: int
    key: str
    value: str
    score: float
    how: str


def _is_folder(t: _Tag) -> bool:
    """Folder tags are keyed by their relative path; other sources by 'source:name'."""
    return ":" not in t.key.split("/", 1)[0]


def _clusters(tags: Sequence[_Tag]) -> list[list[_Tag]]:
    """Tags grouped by (label, score, how), in the order they first appear (best first)."""
    groups: dict[tuple[str, float, str], list[_Tag]] = {}
    for t in tags:
        groups.setdefault((t.value.lower(), round(t.score, 4), t.how), []).append(t)
    return list(groups.values())


def describe_tags(tags: Sequence[_Tag], expand: bool = False) -> str:
    """One keyword's tags: each as 'label [key] score how', same-named ones collapsed; at most
    MAX_ENTRIES entries unless ``expand`` (which also lists every tag of a collapsed entry)."""
    if expand:
        return ", ".join(f"{t.value} [{t.key}] {t.score:.2f} {t.how}" for t in tags)
    entries: list[str] = []
    for members in _clusters(tags):
        first = members[0]
        if len(members) >= COLLAPSE_AT:
            kind = "folders" if all(_is_folder(t) for t in members) else "tags"
            entries.append(f"{len(members)} {kind} named '{first.value}', {first.score:.2f} {first.how}")
        else:
            entries += [f"{t.value} [{t.key}] {t.score:.2f} {t.how}" for t in members]
    if len(entries) > MAX_ENTRIES:
        rest = len(entries) - MAX_ENTRIES
        entries = entries[:MAX_ENTRIES] + [f"… and {rest} more"]
    return ", ".join(entries)


def describe_names(tags: Sequence[_Tag], expand: bool = False) -> str:
    """Labels only ('reports ×912, Audit'), for the tags an ancestor covers."""
    if expand:
        return ", ".join(t.value for t in tags)
    counts: dict[str, int] = {}
    for t in tags:
        counts[t.value] = counts.get(t.value, 0) + 1
    names = [f"{v} ×{n}" if n > 1 else v for v, n in counts.items()]
    if len(names) > MAX_ENTRIES:
        names = names[:MAX_ENTRIES] + [f"… and {len(names) - MAX_ENTRIES} more"]
    return ", ".join(names)
