"""One-shot Ollama tasks besides chat answers (``LLMHelpers``), each with a clean fallback:

- ``context_fn(doc_excerpt, chunk_text)``: contextual chunk enhancement (documents.contextual's
  ``ContextFn``). Raises on failure: ``contextualize`` then keeps all chunks plain.
- ``rerank(query, passages)``: listwise reranking; the model returns a JSON permutation. Never
  raises: output that does not parse (or no server) gives back the fused order, ``fell_back``
  True and the reason.

The callbacks are synchronous (their callers are); each call runs the async client on a private
event loop, in a helper thread when the calling thread already runs one (the UI's qasync loop).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable, Coroutine, Optional, Sequence, TypeVar

from spar_desktop.core.llm.client import ChatError, Ollama
from spar_desktop.core.config import Settings
from spar_desktop.core.in_thread import call_in_thread
from spar_desktop.core.llm.prompts import CONTEXT_PROMPT, RERANK_PROMPT
from spar_desktop.core.llm.reply import json_in_reply

T = TypeVar("T")
RERANK_PASSAGE_CHARS = 600  # listwise prompts hold every candidate: keep each one short




def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, even inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    return call_in_thread(lambda: asyncio.run(coro), "spar-llm-helper")


@dataclass(frozen=True)
class RerankResult:
    order: tuple[int, ...]  # indices into the input, best first (a permutation of range(n))
    fell_back: bool  # True: ``order`` is the input (fused) order
    reason: Optional[str] = None  # why it fell back

    def apply(self, items: Sequence[T]) -> list[T]:
        return [items[i] for i in self.order]


def parse_permutation(reply: str, n: int) -> Optional[tuple[int, ...]]:
    """1-based passage numbers from the model → a full 0-based permutation; numbers it forgot
    follow in their fused order. None when nothing usable is there."""
    try:
        data = json_in_reply(reply)
    except (json.JSONDecodeError, ValueError):
        return None
    if isinstance(data, dict):
        data = next((data[k] for k in ("ranking", "order", "permutation", "ranks", "passages") if k in data), None)
    if not isinstance(data, list):
        return None
    seen: list[int] = []
    for x in data:
        if isinstance(x, bool):
            continue
        if isinstance(x, str) and x.strip().strip("[]").isdigit():
            x = int(x.strip().strip("[]"))
        if isinstance(x, int) and 1 <= x <= n and x - 1 not in seen:
            seen.append(x - 1)
    if not seen:
        return None
    return tuple(seen + [i for i in range(n) if i not in seen])


class LLMHelpers:
    """The helpers bound to one Ollama service; its bound methods are the callbacks."""

    def __init__(self, ollama: Ollama) -> None:
        self.ollama = ollama

    @classmethod
    def from_settings(cls, settings: Optional[Settings], model: Optional[str] = None, **kw: Any) -> "LLMHelpers":
        return cls(Ollama.from_settings(settings, model, **kw))

    # -- contextual chunks ------------------------------------------------------------------
    async def acontext(self, doc_excerpt: str, chunk_text: str) -> str:
        reply = await self.ollama.generate(CONTEXT_PROMPT.format(doc=doc_excerpt, chunk=chunk_text),
                                           options={"temperature": 0, "num_predict": 120})
        return " ".join(reply.split())

    def context_fn(self, doc_excerpt: str, chunk_text: str) -> str:
        return run_sync(self.acontext(doc_excerpt, chunk_text))

    # -- reranking --------------------------------------------------------------------------
    async def arerank(self, query: str, passages: Sequence[Any]) -> RerankResult:
        texts = [p if isinstance(p, str) else (getattr(p, "text", None) or str(p)) for p in passages]
        n = len(texts)
        fused = tuple(range(n))
        if n < 2:
            return RerankResult(fused, False)
        body = "\n\n".join(f"[{i + 1}] {' '.join(t.split())[:RERANK_PASSAGE_CHARS]}" for i, t in enumerate(texts))
        try:
            reply = await self.ollama.generate(RERANK_PROMPT.format(n=n, query=query, passages=body),
                                               json_format=True, options={"temperature": 0})
        except ChatError as exc:
            return RerankResult(fused, True, str(exc))
        order = parse_permutation(reply, n)
        if order is None:
            return RerankResult(fused, True, "the model's ranking did not parse as a JSON list of passage numbers")
        return RerankResult(order, False)

    def rerank(self, query: str, passages: Sequence[Any]) -> RerankResult:
        return run_sync(self.arerank(query, passages))
