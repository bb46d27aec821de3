"""Request understanding with the rules as the floor: ``understand_request(text, generate)``.

``generate`` None (no Ollama, or the setting off): ``parse_request`` alone, exactly as before.
Otherwise the model reads the request too (request_model: strict JSON, validated) and its reading
is merged with the rules':
- keywords: the rules' first; the model's phrases are added when they say something new (not the
  same phrase, not words of a rules phrase, not only a date, type, person or folder);
- dates, file types, people, folders: the rules' are hard constraints and win — when the rules
  found any of a kind the model's different ones are left out (and said so); when they found none,
  the model's are applied (e.g. 'What did the board decide in May 2019?': the rules read May 2019
  as the topic, the model as the files' date);
- every constraint records its source ('rules', 'model', 'rules+model'), shown by the explanation
  and droppable by the user (request_sources.drop_constraint).
A reading that fails (no answer in time, not JSON, wrong types, nothing checkable) is not used:
the rules' reading is kept, with a note saying why.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import date
from typing import Any, Optional

from spar_desktop.core.workspaces.dates import content_date_note
from spar_desktop.core.workspaces.request import ParsedRequest, parse_request
from spar_desktop.core.workspaces.request_model import Generate, ModelReading, ModelUnavailable, ask_model, inflects
from spar_desktop.core.workspaces.request_sources import dates_value

DEFAULT_TIMEOUT_S = 3.0
NOTHING_FOUND = "no keywords, dates or file types found in the request (only common words?)"


def request_generator(settings: Any) -> Optional[Generate]:
    """The settings' Ollama as a JSON ``generate``, or None when turned off. The server is looked
    for inside the call, so ``understand_request``'s timeout bounds the look too; no server:
    ModelUnavailable, and the rules alone read the request, with nothing said."""
    if settings is None or not getattr(settings, "request_llm", False):
        return None

    def generate(prompt: str) -> str:
        from spar_desktop.core.llm.connection import ollama_generator  # deferred: loads ollama/httpx

        model, why_not = ollama_generator(settings, json_format=True, timeout=settings.request_llm_timeout_s)
        if model is None:
            raise ModelUnavailable(why_not)
        return model(prompt)

    return generate


def understand_request(text: str, generate: Optional[Generate], today: Optional[date] = None,
                       timeout_s: float = DEFAULT_TIMEOUT_S) -> ParsedRequest:
    today = today or date.today()
    rules = parse_request(text, today)
    if generate is None or not " ".join((text or "").split()):
        return rules
    started = time.perf_counter()
    reading = ask_model(" ".join(text.split()), generate, today, timeout_s)
    took = time.perf_counter() - started
    if reading.unavailable:
        return rules
    if reading.failure:
        return replace(rules, notes=rules.notes + (f"the model's reading was not used: {reading.failure}; "
                                                   "the rules alone read the request",),
                       sources=_rules_sources(rules))
    merged = merge(rules, reading, today)
    extra = f"; left out: {'; '.join(reading.refused[:4])}" if reading.refused else ""
    return replace(merged, notes=merged.notes + (f"the model read the request too ({took:.1f} s): each constraint "
                                                 f"says whether it came from the rules, the model or both{extra}",))


def _rules_sources(p: ParsedRequest) -> tuple[tuple[str, str, str], ...]:
    out = [("keyword", k, "rules") for k in p.keywords] + [("folder", f, "rules") for f in p.folders]
    if p.since or p.until:
        out.append(("dates", dates_value(p.since, p.until), "rules"))
    out += [("type", f, "rules") for f in p.formats] + [("author", a, "rules") for a in p.authors]
    return tuple(out)


def _merge_kind(kind: str, ours: tuple[str, ...], theirs: tuple[str, ...], sources: list, notes: list) -> tuple[str, ...]:
    """The rules' values win when they found any; else the model's."""
    low = {t.lower() for t in theirs}
    if ours:
        sources += [(kind, v, "rules+model" if v.lower() in low else "rules") for v in ours]
        extra = [t for t in theirs if t.lower() not in {v.lower() for v in ours}]
        if extra:
            notes.append(f"the model also read {kind} {', '.join(extra)}; the rules' {', '.join(ours)} stand")
        return ours
    sources += [(kind, t, "model") for t in theirs]
    return theirs


def merge(rules: ParsedRequest, reading: ModelReading, today: date) -> ParsedRequest:
    sources: list[tuple[str, str, str]] = []
    notes = list(rules.notes)
    problems = [p for p in rules.problems if p != NOTHING_FOUND]
    since, until = rules.since, rules.until
    if since or until:
        same = (reading.since, reading.until) == (since, until)
        sources.append(("dates", dates_value(since, until), "rules+model" if same else "rules"))
        if (reading.since or reading.until) and not same:
            notes.append(f"the model read the dates as {reading.since or '…'} to {reading.until or '…'}; "
                         f"the rules' {since or '…'} to {until or '…'} stand")
    elif reading.since or reading.until:
        since, until = reading.since, reading.until
        sources.append(("dates", dates_value(since, until), "model"))
        content = {content_date_note(f) for f in rules.date_findings if f.about != "files"}
        notes = [n for n in notes if n not in content]  # the rules' "read as the topic" no longer holds
        notes.append(f"the model reads the request as asking for files dated {since or '…'} to {until or '…'}")
    formats = _merge_kind("type", rules.formats, reading.formats, sources, notes)
    authors = _merge_kind("author", rules.authors, reading.authors, sources, notes)
    folders = _merge_kind("folder", rules.folders, reading.folders, sources, notes)
    keywords = _merge_keywords(rules.keywords, reading.keywords, authors + folders, today, sources)
    merged = replace(rules, keywords=keywords, since=since, until=until, formats=formats, authors=authors,
                     folders=folders, notes=tuple(notes), problems=tuple(problems), sources=tuple(sources))
    return merged if not merged.is_empty else replace(merged, problems=rules.problems)


def _merge_keywords(ours: tuple[str, ...], theirs: tuple[str, ...], names: tuple[str, ...], today: date,
                    sources: list) -> tuple[str, ...]:
    low = {t.lower() for t in theirs}
    sources += [("keyword", k, "rules+model" if k.lower() in low else "rules") for k in ours]
    out = list(ours)
    taken = [set(k.lower().split()) for k in ours]
    names_low = {n.lower() for n in names}
    for kw in theirs:
        if kw.lower() in names_low:
            continue
        # The rules' reading of the phrase alone: 'PDFs from 2019' is a type and a date, no topic.
        for phrase in parse_request(kw, today).keywords:
            words = set(phrase.lower().split())
            if any(all(inflects(w, list(t)) for w in words) for t in taken):  # 'board decisions' ~ 'board decide'
                continue
            taken.append(words)
            out.append(phrase)
            sources.append(("keyword", phrase, "model"))
    return tuple(out)


def read_request(text: str, settings: Any, use_model: bool = True) -> ParsedRequest:
    """The request as the rules and, when the settings allow it and it answers in time, the model
    read it: the one reading the CLI's ``ws create`` and the app's preview share."""
    generate = request_generator(settings) if use_model else None
    timeout = getattr(settings, "request_llm_timeout_s", DEFAULT_TIMEOUT_S) if settings is not None else DEFAULT_TIMEOUT_S
    return understand_request(text, generate, timeout_s=timeout)
