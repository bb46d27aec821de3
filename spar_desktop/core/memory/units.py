"""Expansion units c(q): short texts that, added to a query, help retrieve its answer.

From Ollama when reachable (keywords and a HyDE-style hypothetical answer), else from local
pseudo-relevance feedback: salient terms and the query-closest sentences of the top results.
Every source goes through ``clean_units``, so empty, enormous or non-text units never reach
the memory.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from spar_desktop.core.llm.prompts import LLM_PROMPT
from spar_desktop.core.llm.reply import json_in_reply
from spar_desktop.core.memory.config import ERMConfig

log = logging.getLogger(__name__)

_WORD = re.compile(r"[^\W\d_][\w\-]*", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")
_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)



@dataclass(frozen=True)
class ExpansionUnit:
    text: str
    kind: str  # keywords | hyde | terms | sentence


def clean_units(units: Iterable[Any], config: ERMConfig = ERMConfig()) -> list[ExpansionUnit]:
    """Drop what cannot be a unit (non-text, empty, wordless), cut the enormous, de-duplicate."""
    out: list[ExpansionUnit] = []
    seen: set[str] = set()
    for u in units:
        text, kind = (u.text, u.kind) if isinstance(u, ExpansionUnit) else (u, "keywords")
        if not isinstance(text, str):
            log.info("ERM: ignored a non-text expansion unit (%s)", type(text).__name__)
            continue
        text = " ".join(text.split())
        if len(text) < config.min_unit_chars or not _HAS_WORD.search(text):
            if text:
                log.info("ERM: ignored an expansion unit without usable text: %r", text[:40])
            continue
        if len(text) > config.max_unit_chars:
            log.info("ERM: cut an expansion unit of %d characters to %d", len(text), config.max_unit_chars)
            text = text[: config.max_unit_chars].rsplit(" ", 1)[0] or text[: config.max_unit_chars]
        norm = text.lower()
        if norm in seen:
            continue
        seen.add(norm)
        out.append(ExpansionUnit(text, str(kind)[:16]))
        if len(out) >= config.max_units:
            break
    return out


def prf_units(query: str, passages: Sequence[str], *, idf: Optional[Callable[[str], float]] = None,
              sentence_scores: Optional[Callable[[Sequence[str]], np.ndarray]] = None,
              stopwords: frozenset[str] = frozenset(), config: ERMConfig = ERMConfig()) -> list[ExpansionUnit]:
    """Local expansion when no LLM is reachable (RM3-style pseudo-relevance feedback).

    ``terms``: words frequent across the top passages and rare in the collection (``idf``),
    in two units of about four words; ``sentence``: the passages' sentences closest to the query
    (``sentence_scores`` gives their similarity, e.g. cosine with the query vector)."""
    passages = [p for p in passages[: config.prf_passages] if p and p.strip()]
    if not passages:
        return []
    qwords = {w.lower() for w in _WORD.findall(query)}
    weight: Counter[str] = Counter()
    for p in passages:
        tf = Counter(w.lower() for w in _WORD.findall(p))
        for w, n in tf.items():
            if len(w) < 3 or w in stopwords:
                continue
            weight[w] += 1.0 + math.log(n)
    scored = sorted(((wt * (idf(w) if idf else 1.0), w) for w, wt in weight.items() if w not in qwords), reverse=True)
    terms = [w for _, w in scored[: config.prf_terms]]
    units: list[ExpansionUnit] = []
    half = max(1, (len(terms) + 1) // 2)
    for i in range(0, len(terms), half):
        units.append(ExpansionUnit(" ".join(terms[i:i + half]), "terms"))
    if config.prf_sentences > 0:
        sents = [s.strip() for p in passages for s in _SENTENCE.split(p) if len(s.split()) >= 4]
        if sents:
            scorer = sentence_scores or (lambda ss: _lexical_scores(qwords, ss, idf))
            sims = np.asarray(scorer(sents), dtype=np.float32)
            for i in np.argsort(-sims)[: config.prf_sentences]:
                units.append(ExpansionUnit(sents[int(i)], "sentence"))
    return clean_units(units, config)


def _lexical_scores(qwords: set[str], sentences: Sequence[str], idf: Optional[Callable[[str], float]]) -> np.ndarray:
    """IDF mass of the query's words a sentence contains, damped by its length: the cheap
    stand-in for embedding every candidate sentence (bulk evaluation)."""
    out = []
    for s in sentences:
        words = {w.lower() for w in _WORD.findall(s)}
        mass = sum(idf(w) if idf else 1.0 for w in qwords & words)
        out.append(mass / math.sqrt(max(len(words), 1)))
    return np.asarray(out, dtype=np.float32)


def parse_llm_units(reply: str, config: ERMConfig = ERMConfig()) -> list[ExpansionUnit]:
    """The model's JSON → units; junk (no JSON, wrong shapes) gives [] and a log line."""
    try:
        data = json_in_reply(reply)
    except (json.JSONDecodeError, ValueError, TypeError):
        log.info("ERM: the model's expansion was not JSON; using local feedback instead")
        return []
    if not isinstance(data, dict):
        log.info("ERM: the model's expansion had no fields; using local feedback instead")
        return []
    raw: list[ExpansionUnit] = []
    keywords = data.get("keywords")
    if isinstance(keywords, list):
        words = [k for k in keywords if isinstance(k, str) and k.strip()]
        if words:
            raw.append(ExpansionUnit(" ".join(words[:8]), "keywords"))
    if isinstance(data.get("answer"), str):
        raw.append(ExpansionUnit(data["answer"], "hyde"))
    return clean_units(raw, config)


def llm_units(helpers: Any, query: str, config: ERMConfig = ERMConfig()) -> list[ExpansionUnit]:
    """Keywords + hypothetical answer from Ollama through ``LLMHelpers``; [] on any failure
    (learning then uses local feedback: it never fails on the LLM)."""
    # Deferred: chat's client loads ollama, httpx and pydantic, needed only when an LLM is asked.
    from spar_desktop.core.llm.client import ChatError
    from spar_desktop.core.llm.helpers import run_sync

    try:
        reply = run_sync(helpers.ollama.generate(LLM_PROMPT.format(query=query), json_format=True,
                                                 options={"temperature": 0, "num_predict": 256}))
    except ChatError as exc:
        log.info("ERM: no LLM expansion (%s); using local feedback instead", exc)
        return []
    except Exception as exc:  # noqa: BLE001 - any other LLM trouble (a broken client) must not stop learning
        log.warning("ERM: the LLM expansion failed (%s); using local feedback instead", exc)
        return []
    return parse_llm_units(reply, config)
