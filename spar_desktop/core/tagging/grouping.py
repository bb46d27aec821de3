"""Grouping sibling tags into intermediate tags (SPAR §3.2): "Pumps", "Valves", "Seals" →
"Mechanical". Topic induction (``hierarchy.py``) clusters *files*; this groups an existing flat
taxonomy or a level of folder names.

Two ways, the first that works:
- the model: one prompt listing the tags (``GROUP_TAGS_PROMPT``) through an injected
  ``generate(prompt) -> reply`` (``ollama_grouper`` binds it to core.llm's connection). The reply is
  validated, never trusted: unknown tags are ignored, each tag lands in at most one group, groups
  of fewer than two tags are dropped, names are cleaned and bounded. A reply that leaves nothing
  usable, fails or times out falls back to
- clustering: the tags' label vectors (label and description, through the project's encoder)
  grouped by average-linkage agglomerative clustering, the number of groups chosen by cosine
  silhouette; each group named from words its members share (c-TF-IDF against the other groups)
  or, when they share none, from its most central members ("Invoices, Payments").
The result is a ``GroupingProposal``: nothing changes until it is accepted.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Any, Callable, Optional, Sequence

import numpy as np

from spar_desktop.core.config import Settings
from spar_desktop.core.llm.prompts import GROUP_TAGS_PROMPT
from spar_desktop.core.llm.reply import json_in_reply
from spar_desktop.core.tagging.grouping_proposal import (
    GroupingError, GroupingProposal, Selection, TagGroup, clean_group_name, now,
)
from spar_desktop.core.tagging.vocabulary import tag_text

log = logging.getLogger(__name__)

Generate = Callable[[str], str]
Embed = Callable[[list[str]], Any]

MAX_GROUPS = 12
MAX_PROMPT_TAGS = 300  # more labels than this do not fit one prompt of a small local model
MODEL_TIMEOUT = 120.0  # seconds for the whole reply; a slower model falls back to clustering
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP = frozenset("and the for with from other misc general of".split())


# -------------------------------------------------------------------- the model
def grouping_prompt(selection: Selection, max_groups: int = MAX_GROUPS) -> str:
    under = f" under “{selection.parent_label}”" if selection.parent_label else ""
    tags = "\n".join(f"- {' '.join(t.label.split())}" for t in selection.tags)
    return GROUP_TAGS_PROMPT.format(under=under, tags=tags, max_groups=max_groups)


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().split())


def parse_groups(reply: str, selection: Selection, max_groups: int = MAX_GROUPS) -> list[tuple[str, list[int]]]:
    """The usable groups of a model's reply as (clean name, tag ids); ValueError when it holds none.
    Tags are matched by label (case and spacing ignored); the first group naming a tag keeps it."""
    try:
        data = json_in_reply(reply)
    except ValueError:
        raise ValueError("the model's reply was not JSON") from None
    items = data.get("groups") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("the model's reply held no list of groups")
    by_label: dict[str, int] = {}
    for t in selection.tags:
        by_label.setdefault(_norm(t.label), t.id)
    labels = set(by_label)
    placed: set[int] = set()
    out: list[tuple[str, list[int]]] = []
    for item in items[: 4 * max_groups]:  # a runaway list is not read to its end
        if not isinstance(item, dict) or not isinstance(item.get("tags"), list):
            continue
        name = item.get("name")
        try:
            name = clean_group_name(name) if isinstance(name, str) else None
        except GroupingError:
            name = None
        if not name:
            continue
        ids = [by_label[_norm(x)] for x in item["tags"] if isinstance(x, str) and _norm(x) in by_label]
        ids = [t for t in dict.fromkeys(ids) if t not in placed]
        if len(ids) < 2:
            continue
        placed.update(ids)
        out.append((name, ids))
    if not out:
        raise ValueError("the model proposed no group of two or more of the tags")
    return _distinct_names(out[:max_groups], labels)


def _distinct_names(groups: list[tuple[str, list[int]]], member_labels: set[str]) -> list[tuple[str, list[int]]]:
    """Group names must differ from each other and from the tags (a group "Pumps" holding the tag
    "Pumps" would be two rows of the same name)."""
    used: set[str] = set()
    out = []
    for name, ids in groups:
        base = name if _norm(name) not in member_labels else clean_group_name(f"{name} group")
        candidate, k = base, 2
        while _norm(candidate) in used or _norm(candidate) in member_labels:
            candidate, k = clean_group_name(f"{base} ({k})"), k + 1
        used.add(_norm(candidate))
        out.append((candidate, ids))
    return out


def ollama_grouper(settings: Settings, timeout: float = MODEL_TIMEOUT) -> tuple[Optional[Generate], Optional[str]]:
    """(generate, None) when the settings' Ollama server answers, else (None, why not)."""
    from spar_desktop.core.llm.connection import ollama_generator  # deferred: loads ollama/httpx

    return ollama_generator(settings, json_format=True, timeout=timeout)


# -------------------------------------------------------------------- clustering
def label_vectors(selection: Selection, embed: Embed) -> np.ndarray:
    """L2-normalised vectors of the tags' text (label and description, as tag suggestions use)."""
    texts = [tag_text(t.label, t.description, []) for t in selection.tags]
    vecs = np.asarray(embed(texts), dtype=np.float32)
    return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)


def cluster_labels(x: np.ndarray, max_groups: int = MAX_GROUPS) -> np.ndarray:
    """Cluster labels 0..k-1 by average-linkage on cosine distance, k (2..n-1) by silhouette; one
    cluster when there are too few tags to split (three tags a user selected belong together) or
    no split separates them at all (silhouette ≤ 0)."""
    from sklearn.cluster import AgglomerativeClustering  # deferred: scikit-learn is slow to import
    from sklearn.metrics import silhouette_score

    n = len(x)
    best, best_labels = 0.0, np.zeros(n, dtype=np.int64)
    if n < 4:
        return best_labels
    for k in range(2, min(max_groups, n - 1) + 1):
        labels = AgglomerativeClustering(n_clusters=k, metric="cosine", linkage="average").fit_predict(x)
        if len(set(labels)) < 2:
            continue
        score = float(silhouette_score(x, labels, metric="cosine"))
        if score > best + 1e-6:  # ties keep the fewer groups
            best, best_labels = score, labels
    return best_labels


def _words(text: str) -> set[str]:
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in _STOP}


def name_group(members: list[str], others: list[list[str]], central: list[str]) -> str:
    """Words most members share and other groups lack (c-TF-IDF over labels), else up to three
    central members' labels."""
    df = Counter(w for m in members for w in _words(m))
    other_df = Counter(w for g in others for m in g for w in _words(m))
    n_other = sum(len(g) for g in others)
    scored = sorted(((c / len(members)) * np.log((1 + len(members) + n_other) / (1 + c + other_df[w])), w)
                    for w, c in df.items() if c >= 2 and c * 2 >= len(members))
    shared = [w for _, w in sorted(scored, key=lambda sw: (-sw[0], sw[1]))][:2]
    if shared:
        return clean_group_name(" & ".join(w.title() for w in shared))
    return clean_group_name(", ".join(central[:3]) + (", …" if len(members) > 3 else ""))


def cluster_groups(selection: Selection, embed: Embed, max_groups: int = MAX_GROUPS) -> list[tuple[str, list[int]]]:
    """Groups of two or more tags by their label vectors, each named from its members."""
    x = label_vectors(selection, embed)
    labels = cluster_labels(x, max_groups)
    clusters = [np.flatnonzero(labels == c) for c in range(int(labels.max()) + 1)]
    clusters = sorted((c for c in clusters if len(c) >= 2), key=lambda c: (-len(c), int(c[0])))
    tags = selection.tags
    member_labels = [[tags[i].label for i in c] for c in clusters]
    out = []
    for k, rows in enumerate(clusters):
        centroid = x[rows].mean(axis=0)
        central = [tags[i].label for i in rows[np.argsort(-(x[rows] @ centroid), kind="stable")]]
        others = member_labels[:k] + member_labels[k + 1:]
        out.append((name_group(member_labels[k], others, central), [tags[i].id for i in rows]))
    return _distinct_names(out, {_norm(t.label) for t in tags})


# -------------------------------------------------------------------- proposing
def propose_grouping(selection: Selection, embed: Optional[Embed] = None, generate: Optional[Generate] = None,
                     max_groups: int = MAX_GROUPS, why_no_model: str = "") -> GroupingProposal:
    """A proposal from the model when ``generate`` is given and its reply is usable, else from
    clustering the label vectors (``embed(texts) -> vectors``); the note says why the model's
    grouping was not used. GroupingError when neither can group the tags."""
    note = why_no_model
    if generate is not None and len(selection.tags) > MAX_PROMPT_TAGS:
        note, generate = f"{len(selection.tags)} tags are too many for one prompt (at most {MAX_PROMPT_TAGS})", None
    if generate is not None:
        try:
            groups = parse_groups(generate(grouping_prompt(selection, max_groups)), selection, max_groups)
            return _proposal(selection, groups, "ollama", "")
        except Exception as exc:  # noqa: BLE001 - a network call and a model's text: clustering is the fallback
            log.info("tag grouping by the model failed: %s", exc)
            note = f"the model's grouping was not usable ({_short(exc)})"
    if embed is None:
        raise GroupingError("no model reply and no encoder to cluster the tags with" + (f": {note}" if note else ""))
    groups = cluster_groups(selection, embed, max_groups)
    if note:
        note += "; grouped by label similarity instead"
    return _proposal(selection, groups, "clusters", note)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]


def _proposal(selection: Selection, groups: Sequence[tuple[str, list[int]]], method: str, note: str) -> GroupingProposal:
    return GroupingProposal(selection, tuple(TagGroup(str(k + 1), name, tuple(ids)) for k, (name, ids) in enumerate(groups)),
                            method, note, now())
