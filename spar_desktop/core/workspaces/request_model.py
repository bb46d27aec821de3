"""A language model's reading of a workspace request (SPAR §3: the LLM extracts keywords and
metadata), asked for as strict JSON and validated item by item, never trusted as it comes.

``ask_model(text, generate, today, timeout_s)`` sends REQUEST_PROMPT through the injected
``generate(prompt) -> reply`` (core/llm ``ollama_generator`` in the app and the CLI, a scripted
server in tests) and returns a ``ModelReading``: the items that passed, the items refused with
why, or — when nothing usable came back — ``failure`` saying why the model's reading is not used.

What is checked (the reply is data from a program that can be wrong, slow or manipulated by the
text of the request itself):
- the whole reply: an answer within ``timeout_s`` (the call runs in a thread of its own, so a
  callable that ignores its own timeout cannot hold the request up), at most MAX_REPLY_CHARS,
  JSON, one object, list fields as lists of strings, dates as strings or null. Any of these
  wrong: the reading is not used at all.
- each item: strings at most MAX_ITEM_CHARS, at most MAX_ITEMS per field; keywords and
  identifiers made of the request's own words (or inflections: 'decision' for 'decide'), people
  and folders found in the request as written; dates that parse (YYYY-MM-DD), in order, and
  grounded (inside a date expression the rules found, or in a year the request names); types
  among the index's formats (or a type word the rules know: 'spreadsheets'). A refused item is
  left out and named; the valid rest is used (each valid item is the user's own words, so an
  injected instruction can add nothing the request did not already say).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import date
from typing import Any, Callable, Optional

from spar_desktop.core.llm.prompts import REQUEST_PROMPT
from spar_desktop.core.llm.reply import json_in_reply
from spar_desktop.core.workspaces.dates import find_dates
from spar_desktop.core.workspaces.request import FILE_TYPE_WORDS, KNOWN_FORMATS, extract_keywords

Generate = Callable[[str], str]

MAX_REPLY_CHARS = 20_000
MAX_ITEM_CHARS = 100
MAX_ITEMS = 12
LIST_FIELDS = ("keywords", "identifiers", "types", "people", "folders")
UNAVAILABLE = "unavailable"
_TOKEN_RE = re.compile(r"[^\W_]+")


class ModelUnavailable(Exception):
    """Raised by a ``generate`` that found no model to ask (no server): the rules alone, silently."""


@dataclass(frozen=True)
class ModelReading:
    keywords: tuple[str, ...] = ()  # identifiers included (after the topic phrases)
    since: Optional[date] = None
    until: Optional[date] = None
    formats: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()  # items left out, each with why
    failure: Optional[str] = None  # set: nothing of the reading is used, and why
    unavailable: bool = False  # no model to ask: nothing to say, the rules read the request as ever

    @property
    def is_empty(self) -> bool:
        return not (self.keywords or self.since or self.until or self.formats or self.authors or self.folders)


def request_prompt(text: str, today: date) -> str:
    return REQUEST_PROMPT.format(request=text, today=today.isoformat(), types=", ".join(sorted(KNOWN_FORMATS)))


def ask_model(text: str, generate: Generate, today: date, timeout_s: float) -> ModelReading:
    """The model's validated reading of ``text``; never raises (a failure is in ``failure``)."""
    reply, error = _call_with_timeout(generate, request_prompt(text, today), timeout_s)
    if error == UNAVAILABLE:
        return ModelReading(unavailable=True)
    if error is not None:
        return ModelReading(failure=error)
    return validate_reply(reply or "", text, today)


def _call_with_timeout(generate: Generate, prompt: str, timeout_s: float) -> tuple[Optional[str], Optional[str]]:
    """(reply, None) or (None, why). A daemon thread: a late reply is simply never read."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["reply"] = generate(prompt)
        except Exception as exc:  # noqa: BLE001 - any failure of the model means "rules alone"
            box["error"] = exc

    t = threading.Thread(target=target, name="spar-request-model", daemon=True)
    t.start()
    t.join(timeout_s)
    if t.is_alive():
        return None, f"no answer within {timeout_s:g} s"
    if isinstance(box.get("error"), ModelUnavailable):
        return None, UNAVAILABLE
    if "error" in box:
        return None, f"the model failed ({' '.join(str(box['error']).split())[:200]})"
    return (box["reply"] if isinstance(box["reply"], str) else str(box["reply"])), None


def validate_reply(reply: str, text: str, today: date) -> ModelReading:
    """Check a reply as described in the module docstring."""
    if len(reply) > MAX_REPLY_CHARS:
        return ModelReading(failure=f"the reply is too long ({len(reply):,} characters)")
    try:
        data = json_in_reply(reply)
    except (json.JSONDecodeError, ValueError):
        return ModelReading(failure="the reply is not JSON")
    if not isinstance(data, dict):
        return ModelReading(failure="the reply is not a JSON object")
    for key in LIST_FIELDS:
        value = data.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
            return ModelReading(failure=f"'{key}' is not a list of strings")
    for key in ("since", "until"):
        if data.get(key) is not None and not isinstance(data[key], str):
            return ModelReading(failure=f"'{key}' is not a date string")
    refused: list[str] = []
    words = _tokens(text)
    keywords = _grounded_keywords([*(data.get("keywords") or ()), *(data.get("identifiers") or ())], words, refused)
    since, until = _grounded_dates(data.get("since"), data.get("until"), text, today, refused)
    formats = _known_formats(data.get("types") or (), refused)
    authors = _in_request(data.get("people") or (), text, "person", refused)
    folders = _in_request(data.get("folders") or (), text, "folder", refused)
    reading = ModelReading(tuple(keywords), since, until, tuple(formats), tuple(authors), tuple(folders),
                           tuple(refused))
    if reading.is_empty and refused:
        return ModelReading(refused=tuple(refused), failure="nothing in the reply could be checked against the "
                                                            "request (" + "; ".join(refused[:3]) + ")")
    return reading


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in _TOKEN_RE.findall(text)]


def inflects(word: str, words: list[str]) -> bool:
    """``word`` is in the request, or shares a stem with one of its words ('decision' ~ 'decide':
    the same first four letters, covering most of the shorter word)."""
    if word in words:
        return True
    for w in words:
        n = 0
        for a, b in zip(word, w):
            if a != b:
                break
            n += 1
        if n >= 4 and n >= 0.6 * min(len(word), len(w)):
            return True
    return False


def _short(item: str) -> str:
    item = " ".join(item.split())
    return item if len(item) <= 40 else item[:40] + "…"


def _bounded(items: Any, what: str, refused: list[str]) -> list[str]:
    out: list[str] = []
    for item in list(items)[:MAX_ITEMS]:
        item = " ".join(item.split())
        if not item:
            continue
        if len(item) > MAX_ITEM_CHARS:
            refused.append(f"{what} '{_short(item)}' is too long")
            continue
        out.append(item)
    if len(items) > MAX_ITEMS:
        refused.append(f"{len(items) - MAX_ITEMS} more {what}s than the {MAX_ITEMS} read")
    return out


def _grounded_keywords(items: list[str], words: list[str], refused: list[str]) -> list[str]:
    out: list[str] = []
    for item in _bounded(items, "keyword", refused):
        tokens = _tokens(item)
        if not tokens or not all(inflects(t, words) for t in tokens):
            refused.append(f"keyword '{_short(item)}' is not in the request")
            continue
        for phrase in extract_keywords(item):  # the rules' trimming: no stop-words at the edges
            if phrase.lower() not in (k.lower() for k in out):
                out.append(phrase)
    return out


def _grounded_dates(since: Optional[str], until: Optional[str], text: str, today: date,
                    refused: list[str]) -> tuple[Optional[date], Optional[date]]:
    parsed: list[Optional[date]] = []
    for key, value in (("since", since), ("until", until)):
        d = None
        if value:
            try:
                d = date.fromisoformat(value.strip()[:10])
            except ValueError:
                refused.append(f"{key} '{_short(value)}' is not a date")
        parsed.append(d)
    a, b = parsed
    if a is None and b is None:
        return None, None
    if a and b and a > b:
        refused.append(f"the dates are out of order ({a} after {b})")
        return None, None
    findings, _problems, _rest = find_dates(text, today)
    spans = [(f.span.start, f.span.end) for f in findings]
    years = set(re.findall(r"\b\d{4}\b", text))
    for d in (a, b):
        if d is not None and not (any(lo <= d <= hi for lo, hi in spans) or str(d.year) in years):
            refused.append(f"the date {d} is not in the request")
            return None, None
    return a, b


def _known_formats(items: list[str], refused: list[str]) -> list[str]:
    out: list[str] = []
    for item in _bounded(items, "type", refused):
        word = item.lower().lstrip(".")
        fmts = (word,) if word in KNOWN_FORMATS else next(
            (v for p, v in FILE_TYPE_WORDS.items() if re.fullmatch(p, word)), ())
        if not fmts:
            refused.append(f"type '{_short(item)}' is not a known file type")
        out += [f for f in fmts if f not in out]
    return out


def _in_request(items: list[str], text: str, what: str, refused: list[str]) -> list[str]:
    flat = " ".join(text.split()).lower()
    out: list[str] = []
    for item in _bounded(items, what, refused):
        if item.lower() not in flat:
            refused.append(f"{what} '{_short(item)}' is not in the request")
        elif item not in out:
            out.append(item)
    return out
