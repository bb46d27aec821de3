"""From a parsed request to an explained, editable filter and the files it admits (SPAR §3.3.2).

Each keyword is matched to tags; when a tag and one of its ancestors both match, only the
ancestor is kept (expansion to descendants brings the other back); each keyword's tags form a
group; a file is admitted when it has ≥1 tag (or descendant) of every group and meets every
metadata constraint. The explanation shows the tags per keyword with scores, the constraints,
and the funnel of file counts, naming the step that emptied the set when nothing is left.

Filters made since issue 16 are *ranked* (ranking.py): required groups and metadata stay hard,
the other keyword groups (and file summaries, when the index has them) score files, and the best
are admitted up to a budget; relaxation (tolerance, dropped groups) is for all-or-nothing filters,
which older releases saved and "every keyword must match" still asks for.

A filter with nothing that chooses files (no tag group, no constraint, no file added by hand)
admits NO file unless the user chose the whole index on purpose (``all_files``): keywords that
matched no tag must never quietly widen a workspace to everything (issue 14).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Optional

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import TagSource
from spar_desktop.core.library.queries import FileFilter, count_files
from spar_desktop.core.library.tags import resolve_tags, under_another
from spar_desktop.core.workspaces import ranking
from spar_desktop.core.workspaces.errors import UnscopedFilter, unscoped_message
from spar_desktop.core.workspaces.explain_text import describe_names, describe_tags
from spar_desktop.core.workspaces.plain_values import instances, plain
from spar_desktop.core.workspaces.request import ParsedRequest
from spar_desktop.core.workspaces.request_sources import (
    dates_source, group_source, source_suffix, sources_from_json, sources_suffix,
)
from spar_desktop.core.workspaces.tag_index import TagChoice, names_one_thing, normalize_words  # noqa: F401 - TagChoice re-exported


@dataclass(frozen=True)
class TagGroup:
    """One keyword's tags: a file needs any of them (or a descendant)."""

    label: str
    tags: tuple[TagChoice, ...]
    pruned: tuple[TagChoice, ...] = ()  # matched, but covered by a matched ancestor
    # Never tolerated as missing: groups the user chose, folders, and keywords that name one
    # thing ('patient A', 'T-07', '2019 budget').
    required: bool = False


@dataclass(frozen=True)
class WorkspaceFilter:
    groups: tuple[TagGroup, ...] = ()
    since: Optional[date] = None
    until: Optional[date] = None
    formats: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    unmatched: tuple[str, ...] = ()  # keywords no tag matched: not used to filter (search still uses them)
    request: str = ""
    notes: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    pinned: tuple[int, ...] = ()  # files added by hand (or by an imported .sparws), always admitted
    only_pinned: bool = False  # an imported workspace is exactly its shared file list
    # Groups relaxation left out (together with the others they admitted nothing): kept so the
    # user sees what was dropped and can add it back (restore_group).
    dropped: tuple[TagGroup, ...] = ()
    # How many of the groups not marked required a file may lack. 0 = every group. Relaxation
    # raises it when no file has every group: a question naming several concepts is rarely
    # tagged with all of them, and (on PubMedQA) tolerating a missing group keeps the answer far
    # more often than dropping the least certain group does.
    tolerance: int = 0
    # The user chose the whole index on purpose (CLI --all-files, the dialog's option): only then
    # does a filter with no tag group and no constraint admit every file.
    all_files: bool = False
    # Ranked admission (issue 16). Absent from filters older releases saved: those keep their
    # all-or-nothing meaning. ``budget``: at most this many ranked files (the user moves it).
    ranked: bool = False
    budget: int = 0
    # Count tag suggestions nobody confirmed (source auto/llm) as tags: only when the user says so.
    include_unconfirmed: bool = False
    # The request encoded as a query (ranking.encode_vector) and the model that encoded it: kept
    # so every explain and build ranks the same way, with or without an encoder at hand.
    request_vector: str = ""
    vector_model: str = ""
    # (kind, value, 'rules' | 'model' | 'rules+model') when a language model read the request too
    # (request_sources.py); empty otherwise, and then left out of the JSON.
    sources: tuple[tuple[str, str, str], ...] = ()

    @property
    def scoped(self) -> bool:
        """Something chooses the files: a tag group, a constraint, files added by hand, the
        explicit choice of the whole index, or (ranked) the request's likeness to file summaries,
        which never admits more than the budget. An unscoped filter admits nothing."""
        return bool(self.groups or self.since or self.until or self.formats or self.authors or self.pinned
                    or self.only_pinned or self.all_files or (self.ranked and self.request_vector))

    @property
    def ranks(self) -> bool:
        """Ranked, with something to rank by (an optional keyword group or a request vector)."""
        return self.ranked and bool(self.optional_groups or self.request_vector)

    def to_json(self) -> dict:
        d = plain(self)
        d["since"] = self.since.isoformat() if self.since else None
        d["until"] = self.until.isoformat() if self.until else None
        if not self.sources:
            del d["sources"]
        return d

    @classmethod
    def from_json(cls, d: dict) -> "WorkspaceFilter":
        def groups_of(key: str) -> tuple[TagGroup, ...]:
            return tuple(TagGroup(g["label"], instances(TagChoice, g.get("tags", ())),
                                  instances(TagChoice, g.get("pruned", ())), bool(g.get("required", False)))
                         for g in d.get(key, ()))

        flt = cls(
            groups=groups_of("groups"), dropped=groups_of("dropped"),
            since=date.fromisoformat(d["since"]) if d.get("since") else None,
            until=date.fromisoformat(d["until"]) if d.get("until") else None,
            formats=tuple(d.get("formats", ())), authors=tuple(d.get("authors", ())),
            unmatched=tuple(d.get("unmatched", ())), request=d.get("request", ""),
            notes=tuple(d.get("notes", ())), problems=tuple(d.get("problems", ())),
            pinned=tuple(int(i) for i in d.get("pinned", ())), only_pinned=bool(d.get("only_pinned", False)),
            tolerance=max(0, int(d.get("tolerance", 0) or 0)), all_files=bool(d.get("all_files", False)),
            ranked=bool(d.get("ranked", False)), budget=max(0, int(d.get("budget", 0) or 0)),
            include_unconfirmed=bool(d.get("include_unconfirmed", False)),
            request_vector=str(d.get("request_vector") or ""), vector_model=str(d.get("vector_model") or ""),
            sources=sources_from_json(d.get("sources")),
        )
        if "all_files" not in d and not flt.scoped:
            # Saved by a release where an unscoped filter meant the whole index: an upgrade must
            # not empty a user's workspace, so it keeps meaning that (now said explicitly).
            flt = replace(flt, all_files=True)
        return flt

    @property
    def optional_groups(self) -> tuple[TagGroup, ...]:
        return tuple(g for g in self.groups if g.tags and not g.required)

    @property
    def effective_tolerance(self) -> int:
        """Tolerance never lets every optional group go: at least one must still match."""
        return max(0, min(self.tolerance, len(self.optional_groups) - 1))

    def file_filter(self, upto_group: Optional[int] = None, constraints: bool = True) -> FileFilter:
        """``upto_group``: only the first groups, all required (the funnel's steps)."""
        groups = self.groups if upto_group is None else self.groups[:upto_group]
        soft: tuple[TagGroup, ...] = ()
        if upto_group is None and self.effective_tolerance:
            soft = self.optional_groups
            groups = tuple(g for g in groups if g not in soft)
        return FileFilter(
            tag_groups=tuple(frozenset(t.tag_id for t in g.tags) for g in groups if g.tags),
            soft_groups=tuple(frozenset(t.tag_id for t in g.tags) for g in soft),
            soft_min=len(soft) - self.effective_tolerance if soft else 0,
            since=self.since if constraints else None, until=self.until if constraints else None,
            formats=self.formats if constraints else (), authors=self.authors if constraints else (),
            include_unconfirmed=self.include_unconfirmed,
        )

    def hard_filter(self, upto_group: Optional[int] = None, constraints: bool = True) -> FileFilter:
        """Ranked mode's hard part: the required groups (the first ``upto_group``) and the constraints."""
        required = tuple(g for g in self.groups if g.required and g.tags)
        return replace(FileFilter(tag_groups=tuple(frozenset(t.tag_id for t in g.tags) for g in required[:upto_group]),
                                  include_unconfirmed=self.include_unconfirmed),
                       since=self.since if constraints else None, until=self.until if constraints else None,
                       formats=self.formats if constraints else (), authors=self.authors if constraints else ())

    def with_budget(self, budget: int) -> "WorkspaceFilter":
        return replace(self, budget=max(1, int(budget)))

    # Edits the UI and CLI offer: each returns a new filter.
    def without_group(self, label: str) -> "WorkspaceFilter":
        return replace(self, groups=tuple(g for g in self.groups if g.label != label))

    def with_group(self, label: str, tags: list[TagChoice]) -> "WorkspaceFilter":
        return replace(self, groups=self.without_group(label).groups + (TagGroup(label, tuple(tags), required=True),))

    def restore_group(self, label: str) -> "WorkspaceFilter":
        """Require a group that relaxation dropped again (the funnel will show what it costs)."""
        back = tuple(replace(g, required=True) for g in self.dropped if g.label == label)  # the user asked
        return replace(self, groups=self.without_group(label).groups + back,
                       dropped=tuple(g for g in self.dropped if g.label != label))

@dataclass(frozen=True)
class FunnelStep:
    label: str
    admitted: int


@dataclass(frozen=True)
class Explanation:
    filter: WorkspaceFilter
    funnel: tuple[FunnelStep, ...]
    emptied_by: Optional[str] = None
    ranking: Optional[ranking.Ranking] = None  # ranked filters: the scoring step
    indexed: int = 0  # files in the index (the budget's "% of the index")
    # Admitted files that would not be without unconfirmed tag suggestions (paths).
    suggested_only: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        """The admitted files as a fraction of the index."""
        return self.admitted / self.indexed if self.indexed else 0.0

    @property
    def admitted(self) -> int:
        return self.funnel[-1].admitted if self.funnel else 0

    def lines(self, expand: bool = False) -> list[str]:
        """The explanation as text; same-named tags of a keyword are one entry unless ``expand``."""
        f = self.filter
        out = [f"Request: {f.request}"] if f.request else []
        for g in f.groups:
            marked = g.required and (f.effective_tolerance or f.ranks)
            out.append(f"  '{g.label}'{' (required)' if marked else ''}{group_source(f.sources, g.label)} → "
                       f"{describe_tags(g.tags, expand)}")
            if g.pruned:
                out.append(f"      (also matched, covered by an ancestor: {describe_names(g.pruned, expand)})")
        for g in f.dropped:
            out.append(f"  '{g.label}' → dropped (with it nothing matched): {describe_names(g.tags, expand)}")
        if f.effective_tolerance:
            n = len(f.optional_groups)
            out.append(f"  a file may lack {f.effective_tolerance} of the {n} groups not marked required")
        for kw in f.unmatched:
            out.append(f"  '{kw}'{source_suffix(f.sources, 'keyword', kw)} → no tag matched; not used to filter "
                       "(search still uses it)")
        if f.all_files:
            out.append("  the whole index, chosen on purpose" + (" (other constraints still apply)" if f.groups or f.since
                                                                  or f.until or f.formats or f.authors else ""))
        if f.since or f.until:
            out.append(f"  dates: {f.since or '…'} to {f.until or '…'}{dates_source(f.sources, f.since, f.until)}")
        if f.formats:
            out.append(f"  file types: {', '.join(f.formats)}{sources_suffix(f.sources, 'type', f.formats)}")
        if f.authors:
            out.append(f"  author: {' or '.join(f.authors)}{sources_suffix(f.sources, 'author', f.authors)}")
        if f.ranks:
            budget = self.ranking.budget if self.ranking else f.budget
            out.append(f"  ranked: files with the best tag matches{' and summaries' if f.request_vector else ''}, "
                       f"at most {budget} (the budget; change it to see more or fewer)")
        if f.include_unconfirmed:
            out.append("  unconfirmed tag suggestions count as tags")
        for n in f.notes:
            out.append(f"  note: {n}")
        for p in f.problems:
            out.append(f"  problem: {p}")
        out.append("Files admitted at each step:")
        out += [f"  {s.admitted:>7}  {s.label}" for s in self.funnel]
        if self.indexed and f.scoped:
            out.append(f"{self.admitted} files, {self.share:.0%} of the index")
        if self.suggested_only:
            out.append(f"{len(self.suggested_only)} admitted only through unconfirmed tag suggestions:")
            out += [f"  {p}" for p in self.suggested_only[:20]]
            if len(self.suggested_only) > 20:
                out.append(f"  … and {len(self.suggested_only) - 20} more (--json lists them all)")
        if not f.scoped:
            out.append(unscoped_message(f))
        elif self.emptied_by:
            out.append(f"Nothing matches: the step '{self.emptied_by}' removed the last files. "
                       "Remove a tag group or relax that constraint.")
        return out

    def to_json(self) -> dict:
        return {"filter": self.filter.to_json(), "funnel": [asdict(s) for s in self.funnel],
                "emptied_by": self.emptied_by, "admitted": self.admitted, "indexed": self.indexed,
                "ranking": self.ranking.to_json() if self.ranking else None,
                "suggested_only": list(self.suggested_only)}


NOTHING_CHOSEN = "nothing chosen: no tag group or constraint"


def require_scope(flt: WorkspaceFilter) -> WorkspaceFilter:
    """``flt`` when something in it chooses files, else UnscopedFilter (naming any keywords
    that matched no tag and the three ways on)."""
    if not flt.scoped:
        raise UnscopedFilter(flt)
    return flt


def prune_to_ancestors(library: Library, matches: list[TagChoice]) -> tuple[list[TagChoice], list[TagChoice]]:
    """Keep a match only when none of its ancestors also matched (one recursive query for all
    matches: a keyword can match hundreds of same-named folders)."""
    with library.session() as s:
        covered = under_another(s, {m.tag_id for m in matches})
    kept, pruned = [], []
    for m in matches:
        (pruned if m.tag_id in covered else kept).append(m)
    return kept, pruned


def names_identified(keyword: str, tags: list[TagChoice]) -> bool:
    """A keyword naming one thing ('turbine T7', 'patient A') is required only when a matched tag
    names that thing too ('Turbine T7'): a tag that merely resembles the keyword ('Lymph Nodes'
    for 'station 9 lymph nodes', 'Aged' for 'patients aged 80') would shut out the very files
    asked about (on PubMedQA, 2% of the questions lost their answer so)."""
    if not names_one_thing(keyword):
        return False
    marks = [normalize_words(w) for w in keyword.split() if re.search(r"\d", w) or (len(w) == 1 and w.isupper())]
    return any(all(set(m) <= set(normalize_words(t.value)) for m in marks) for t in tags)


def build_filter(library: Library, request: ParsedRequest, tag_index, top_n: int = 5,
                 threshold: float = 0.5, relax: bool = True, ranked: bool = True) -> WorkspaceFilter:
    """``ranked`` (the default): keyword groups not marked required score files and the best are
    admitted up to the default budget (a tenth of the index, at least 25).
    Else all-or-nothing, where ``relax``: when the tag groups together admit nothing, admit files
    that lack one of them (then two, ...), and say so in the notes — a request that names one
    concept too many should still give a workspace, with the reason shown."""
    groups: list[TagGroup] = []
    unmatched: list[str] = []
    problems = list(request.problems)
    for kw in request.keywords:
        matches = tag_index.match(kw, top_n, threshold)  # TagChoices already
        if not matches:
            unmatched.append(kw)
            continue
        kept, pruned = prune_to_ancestors(library, matches)
        groups.append(TagGroup(kw, tuple(kept), tuple(pruned), required=names_identified(kw, kept)))
    with library.session() as s:
        for folder in request.folders:
            tags = [t for t in resolve_tags(s, folder) if t.source == TagSource.PATH]
            if tags:
                groups.append(TagGroup(f"folder {folder}", tuple(TagChoice(t.id, t.key, t.value, 1.0, "folder") for t in tags),
                                       required=True))
            else:
                problems.append(f"no folder named '{folder}' in the index; that constraint was not applied")
    flt = WorkspaceFilter(tuple(groups), request.since, request.until, request.formats, request.authors,
                          tuple(unmatched), request.text, request.notes, tuple(problems), sources=request.sources)
    if ranked:
        with library.session() as s:
            return replace(flt, ranked=True, budget=ranking.default_budget(count_files(s, FileFilter())))
    return relax_groups(library, flt) if relax else flt


def relax_groups(library: Library, flt: WorkspaceFilter) -> WorkspaceFilter:
    """While the groups alone admit no file: first tolerate one more missing group among those
    not marked required; when that is exhausted, drop the weakest group (a required one can be
    what admits nothing)."""
    notes = list(flt.notes)
    start = flt.effective_tolerance
    with library.session() as s:
        while count_files(s, flt.file_filter(constraints=False)) == 0 and \
                flt.effective_tolerance < len(flt.optional_groups) - 1:
            flt = replace(flt, tolerance=flt.effective_tolerance + 1)
        if flt.effective_tolerance > start:
            notes.append(f"no file has tags of every group; admitting files that lack at most "
                         f"{flt.effective_tolerance} of the {len(flt.optional_groups)} groups not marked required "
                         "— choose 'match every group' to require all")
        while len(flt.groups) > 1 and count_files(s, flt.file_filter(constraints=False)) == 0:
            weakest = min((g for g in flt.groups if not g.label.startswith("folder ")),
                          key=lambda g: max(t.score for t in g.tags), default=None)
            if weakest is None:
                break
            notes.append(f"no file has tags of every group; dropped the least certain one, '{weakest.label}' "
                         f"(best match {max(t.score for t in weakest.tags):.2f}) — add it back to require it")
            flt = replace(flt.without_group(weakest.label), dropped=flt.dropped + (weakest,))
    return replace(flt, notes=tuple(notes))


def explain(library: Library, flt: WorkspaceFilter) -> Explanation:
    """Count the files admitted after each step: tag groups in order (ranked: the required ones),
    then each constraint, then (ranked) the scoring step, then files added by hand."""
    sel = ranking.select_files(library, flt)
    with library.session() as s:
        indexed = count_files(s, FileFilter())
    if flt.only_pinned:
        n = len(sel.rows)
        return Explanation(flt, (FunnelStep("shared file list (imported)", len(flt.pinned)),
                                 FunnelStep("found in this index", n)), None if n else "found in this index",
                           indexed=indexed)
    steps: list[FunnelStep] = [FunnelStep("all indexed files", indexed)]
    with library.session() as s:
        if flt.ranked:
            required = [g for g in flt.groups if g.required and g.tags]
            for i, g in enumerate(required, start=1):
                steps.append(FunnelStep(f"tag group '{g.label}' (required){group_source(flt.sources, g.label)}",
                                        count_files(s, flt.hard_filter(i, constraints=False))))
            base = flt.hard_filter(constraints=False)
        else:
            for i, g in enumerate(flt.groups, start=1):
                steps.append(FunnelStep(f"tag group '{g.label}'{group_source(flt.sources, g.label)}",
                                        count_files(s, flt.file_filter(i, constraints=False))))
            base = flt.file_filter(constraints=False)
            if flt.effective_tolerance:
                steps.append(FunnelStep(f"or lacking at most {flt.effective_tolerance} of the "
                                        f"{len(flt.optional_groups)} groups not marked required", count_files(s, base)))
        if flt.since or flt.until:
            base = replace(base, since=flt.since, until=flt.until)
            steps.append(FunnelStep(f"dated {flt.since or '…'} to {flt.until or '…'}{dates_source(flt.sources, flt.since, flt.until)}",
                                    count_files(s, base)))
        if flt.formats:
            base = replace(base, formats=flt.formats)
            shown = f"{', '.join(flt.formats)}{sources_suffix(flt.sources, 'type', flt.formats)}"
            steps.append(FunnelStep(f"file type {shown}", count_files(s, base)))
        if flt.authors:
            base = replace(base, authors=flt.authors)
            shown = f"{' or '.join(flt.authors)}{sources_suffix(flt.sources, 'author', flt.authors)}"
            steps.append(FunnelStep(f"author {shown}", count_files(s, base)))
    if sel.ranking is not None:
        steps.append(FunnelStep(sel.ranking.label(), len(sel.ranking.admitted)))
    if flt.pinned:
        steps.append(FunnelStep(f"plus {len(flt.pinned)} files added by hand", len(sel.rows)))
    if not flt.scoped:
        steps = steps[:1] + [FunnelStep(NOTHING_CHOSEN, 0)]
    emptied = None
    for prev, step in zip(steps, steps[1:]) if steps and steps[-1].admitted == 0 else ():
        if prev.admitted > 0 and step.admitted == 0:
            emptied = step.label
            break
    return Explanation(flt, tuple(steps), emptied, sel.ranking, indexed, sel.suggested_only)


def admitted_files(library: Library, flt: WorkspaceFilter) -> list[ranking.Row]:
    """(file id, path, content hash) of every admitted file, path order."""
    return list(ranking.select_files(library, flt).rows)


def tag_choice(library: Library, text: str) -> list[TagChoice]:
    """Tags a user names when editing a filter (by key or label)."""
    with library.session() as s:
        return [TagChoice(t.id, t.key, t.value, 1.0, "user") for t in resolve_tags(s, text)]

