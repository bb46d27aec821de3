"""The optional LLM step of tag suggestions: a classification prompt over a short candidate list.

The model only chooses among the tags the embedding signals already ranked highest (a prompt with
a whole MeSH vocabulary would not fit and would invite invented tags), and anything it answers
that is not one of the offered names is ignored. The caller injects ``generate(prompt) -> reply``
(``ollama_classifier`` binds it to core.llm's connection; tests pass their own).
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from spar_desktop.core.config import Settings
from spar_desktop.core.llm.prompts import CLASSIFY_PROMPT
from spar_desktop.core.llm.reply import json_in_reply

Classify = Callable[[str, list[str]], list[str]]

MAX_CHOSEN = 5
PROMPT_TEXT_CHARS = 1500



def classification_prompt(text: str, labels: Sequence[str], k: int = MAX_CHOSEN) -> str:
    tags = "\n".join(f"- {label}" for label in labels)
    return CLASSIFY_PROMPT.format(k=k, tags=tags, text=" ".join(text.split())[:PROMPT_TEXT_CHARS])


def parse_choice(reply: str, labels: Sequence[str], k: int = MAX_CHOSEN) -> list[str]:
    """The offered labels the reply names (case and spacing ignored), in its order, at most k.
    Raises ValueError when the reply is not the JSON asked for."""
    try:
        data = json_in_reply(reply)
    except ValueError:  # json's own message ("Expecting value: line 1...") means nothing to a user
        raise ValueError("the model's reply was not JSON") from None
    items = data.get("tags") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("the model returned no tag list")
    by_norm = {" ".join(lab.lower().split()): lab for lab in labels}
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            label: Optional[str] = by_norm.get(" ".join(item.lower().split()))
            if label is not None and label not in out:
                out.append(label)
    return out[:k]


def classifier(generate: Callable[[str], str], k: int = MAX_CHOSEN) -> Classify:
    """A ``classify(text, labels) -> chosen labels`` over a prompt-in, reply-out function."""

    def classify(text: str, labels: list[str]) -> list[str]:
        return parse_choice(generate(classification_prompt(text, labels, k)), labels, k)

    return classify


def ollama_classifier(settings: Settings) -> tuple[Optional[Classify], Optional[str]]:
    """(classify, None) when the settings' Ollama server answers, else (None, why not): the one
    place the CLI and the app get the tag classifier from."""
    from spar_desktop.core.llm.connection import ollama_generator  # deferred: loads ollama/httpx

    generate, why_not = ollama_generator(settings, json_format=True)
    return (classifier(generate) if generate else None), why_not
