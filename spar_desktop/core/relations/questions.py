"""Generated questions for EDR-MQ's query set, from a local Ollama server when one is reachable.

``ollama_question_fn`` returns a synthetic.QuestionFn, or None when no server answers, so a build
without Ollama silently goes on with titles and salient sentences. Each call is one blocking
/api/generate request (``asyncio.run`` on a short-lived client): builds run in a worker thread or
the CLI, never on an event loop, so blocking is what they want. Failures raise and
synthetic_queries stops asking after three of them.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Optional

from spar_desktop.core.llm.client import Ollama
from spar_desktop.core.llm.prompts import QUESTIONS_PROMPT as PROMPT
from spar_desktop.core.relations.synthetic import QuestionFn

TEXT_CHARS = 2000  # the opening of a document names its topic; more only slows a small model down


def parse_questions(reply: str, limit: int = 3) -> list[str]:
    """Questions from a model's reply: {"questions": [...]}, a bare JSON list, or one per line."""
    items: list[Any] = []
    try:
        data = json.loads(reply)
        items = data.get("questions", []) if isinstance(data, dict) else data if isinstance(data, list) else []
    except json.JSONDecodeError:
        items = [re.sub(r"^\s*(\d+[.)]|[-*])\s*", "", line) for line in reply.splitlines()]
    out = [" ".join(str(q).split()) for q in items if isinstance(q, str)]
    return [q for q in out if len(q.split()) >= 3][:limit]


def ollama_question_fn(settings: Any, per_doc: int = 3, client: Any = None) -> Optional[QuestionFn]:
    """A QuestionFn backed by Ollama (host and model from the settings), or None if unreachable."""
    ollama = client or Ollama.from_settings(settings)
    if not asyncio.run(ollama.is_reachable()):
        return None

    def ask(title: str, text: str) -> list[str]:
        prompt = PROMPT.format(n=per_doc, title=title or "(none)", text=text[:TEXT_CHARS])
        return parse_questions(asyncio.run(ollama.generate(prompt, json_format=True)), per_doc)

    return ask
