"""``ChatSession.answer``: one question in a thread → retrieval in the thread's workspace →
a streamed, cited answer from Ollama, or a retrieval-only answer when no server is reachable.

Qt-free and async: the UI awaits it on the qasync loop (retrieval runs in a worker thread so the
window never freezes), the CLI through ``asyncio.run``. Whatever happens, the result is an
immutable ``AnswerResult`` and the thread holds both messages (see threads.py for the policy).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

from spar_desktop.core.llm.client import ChatError, ErrorKind, Ollama
from spar_desktop.core.chat.models import AnswerMode, MessageStatus
from spar_desktop.core.chat.prompt import (
    DEFAULT_PASSAGE_CHARS, Citation, Passage, all_citations, build_messages, parse_citations, passages_from_hits,
    reading_order, retrieval_only_text,
)
from spar_desktop.core.chat.threads import ThreadError, ThreadStore
from spar_desktop.core.progress import CancelToken
from spar_desktop.core.retrieval.partial import coverage_percent
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.reranking import rerank_with_settings

DEFAULT_K = 8
NOTHING_FOUND = "Nothing in workspace '{ws}' matches this question, so there is nothing to answer from."


@dataclass(frozen=True)
class Timings:
    retrieval_ms: float = 0.0
    first_token_ms: Optional[float] = None
    generation_ms: Optional[float] = None
    total_ms: float = 0.0
    prompt_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    load_ms: Optional[float] = None
    # Retrieved from a workspace still being built: the share of passages meaning search covered
    # (whole percent); the answer says "searching while building" (chat/view.py). None: complete.
    building_coverage_pct: Optional[int] = None
    building_keyword_pct: Optional[int] = None  # set while the build was still reading files

    def to_json(self) -> dict:
        return {k: (round(v, 1) if isinstance(v, float) else v) for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class AnswerResult:
    thread_id: int
    message_id: int  # the assistant message (feedback, citation-opened go there)
    user_message_id: int
    question: str
    text: str  # == everything passed to on_token, in order
    citations: tuple[Citation, ...]
    passages: tuple[Passage, ...]
    model: Optional[str]  # None in retrieval-only mode
    mode: str  # 'llm' | 'retrieval-only'
    status: str  # 'ok' | 'stopped' | 'error'
    error: Optional[str] = None  # what went wrong, for the user
    error_kind: Optional[str] = None  # client.ErrorKind, or 'workspace'
    notice: Optional[str] = None  # the 'Ollama is not reachable' banner, given once per session
    timings: Timings = field(default_factory=Timings)

    def to_json(self) -> dict:
        return {"thread_id": self.thread_id, "message_id": self.message_id, "question": self.question,
                "text": self.text, "mode": self.mode, "status": self.status, "model": self.model,
                "error": self.error, "error_kind": self.error_kind, "notice": self.notice,
                "citations": [c.to_json() for c in self.citations],
                "passages": [p.to_json() for p in self.passages], "timings": self.timings.to_json()}


class ChatSession:
    """Answers questions in threads of one library's workspaces.

    ``llm_available`` is None until known, then follows every answer and ``check_server`` /
    ``watch_server``; every answer still tries the server first (a refused connection costs
    milliseconds), so chat switches back by itself as soon as Ollama is up.
    """

    def __init__(self, manager: Any, ollama: Optional[Ollama] = None, *, model: Optional[str] = None,
                 k: int = DEFAULT_K, passage_chars: int = DEFAULT_PASSAGE_CHARS) -> None:
        self.manager = manager
        self.threads = ThreadStore(manager.library)
        self.ollama = ollama or Ollama.from_settings(manager.library.settings, model)
        self.model = model or self.ollama.model  # the picker's choice; answer(model=...) overrides
        self.k = k
        self.passage_chars = passage_chars
        self.llm_available: Optional[bool] = None
        self._banner_given = False

    # -- server state -------------------------------------------------------------------------
    def _set_available(self, ok: bool) -> Optional[str]:
        """Update the state; return the banner when it should be shown (first time down)."""
        self.llm_available = ok
        if ok:
            self._banner_given = False  # if it goes away again, say so again
            return None
        if self._banner_given:
            return None
        self._banner_given = True
        return self.ollama.start_hint

    async def check_server(self) -> bool:
        ok = await self.ollama.is_reachable()
        self._set_available(ok)
        return ok

    async def watch_server(self, on_change: Callable[[bool], Any], interval: float = 15.0,
                           stop: Optional[CancelToken] = None) -> None:
        def changed(ok: bool) -> Any:
            self._set_available(ok)
            return on_change(ok)

        await self.ollama.watch_server(changed, interval, stop)

    async def list_models(self) -> list:
        return await self.ollama.list_models()

    # -- answering ------------------------------------------------------------------------------
    async def answer(self, thread_id: int, question: str, on_token: Optional[Callable[[str], Any]] = None,
                     cancel: Optional[CancelToken] = None, *, model: Optional[str] = None,
                     k: Optional[int] = None, on_notice: Optional[Callable[[str], Any]] = None) -> AnswerResult:
        """``on_notice`` gets the 'Ollama is not reachable at ...' banner (when it is due) before
        the retrieval-only text goes to ``on_token``: said first, not after the passages."""
        question = (question or "").strip()
        if not question:
            raise ThreadError("the question is empty")
        # Database work runs in worker threads: under qasync this loop is the UI thread.
        thread = await asyncio.to_thread(self.threads.get, thread_id)  # ThreadError before anything is stored
        model = model or self.model
        turn = _Turn(self.threads, thread, question, on_token)
        turn.user_id = await asyncio.to_thread(self.threads.add_user_message, thread.id, question)
        await asyncio.to_thread(self.threads.touch, thread.id, title_from=question)

        # 1. Retrieval (sync, CPU/disk bound: a worker thread keeps the event loop responsive).
        try:
            results = await asyncio.to_thread(self.manager.search, thread.workspace, question, k or self.k,
                                              "hybrid", f"thread-{thread.id}", "chat")
        except WorkspaceError as exc:
            return await turn.finish_async("", MessageStatus.ERROR, AnswerMode.RETRIEVAL_ONLY, error=str(exc),
                                           kind="workspace")
        except asyncio.CancelledError:
            turn.finish("", MessageStatus.STOPPED, AnswerMode.RETRIEVAL_ONLY)
            raise
        if getattr(results, "building", False):  # answered on what a running build has so far
            turn.coverage_pct = coverage_percent(results.dense_coverage)
            if results.keyword_coverage < 1.0:
                turn.keyword_pct = coverage_percent(results.keyword_coverage)
        if self.llm_available is not False:  # known down: no reranking attempt, no delay
            results = await asyncio.to_thread(rerank_with_settings, results, self.manager.library.settings,
                                              model, self.ollama.host)
        passages = passages_from_hits(results.hits, self.passage_chars)
        if not passages:
            text = NOTHING_FOUND.format(ws=thread.workspace)
            if results.message:
                text += f" ({results.message})"
            turn.emit(text)
            return await turn.finish_async(text, MessageStatus.OK, AnswerMode.RETRIEVAL_ONLY, log_id=results.log_id,
                                           timings=Timings(_retrieval_ms(results), total_ms=turn.elapsed_ms()))
        if cancel is not None and cancel.cancelled:
            return await turn.finish_async("", MessageStatus.STOPPED, AnswerMode.LLM, passages=passages,
                                           log_id=results.log_id)
        # 2. Generation, streamed.
        return await self._generate(turn, passages, results, cancel, model, on_notice)

    async def _generate(self, turn: _Turn, passages: tuple[Passage, ...], results: Any,
                        cancel: Optional[CancelToken], model: Optional[str],
                        on_notice: Optional[Callable[[str], Any]]) -> AnswerResult:
        """The model's streamed answer over ``passages``; the passages alone when no server answers."""
        retrieval_ms = _retrieval_ms(results)
        messages = build_messages(turn.question, passages, await asyncio.to_thread(self.threads.history, turn.thread.id))
        t_gen = time.perf_counter()
        try:
            out = await self.ollama.stream_chat(messages, turn.emit, cancel, model)
        except ChatError as exc:
            if exc.kind == ErrorKind.UNREACHABLE and not turn.streamed:
                return await self._retrieval_only(turn, passages, results, on_notice)
            self.llm_available = True  # it answered, even if with an error
            text = "".join(turn.streamed)
            return await turn.finish_async(text, MessageStatus.ERROR, AnswerMode.LLM, passages=passages,
                                           citations=parse_citations(text, passages), error=str(exc), kind=exc.kind,
                                           used_model=model, log_id=results.log_id,
                                           timings=Timings(retrieval_ms, None, (time.perf_counter() - t_gen) * 1000,
                                                           turn.elapsed_ms()))
        except asyncio.CancelledError:  # the caller's task was cancelled: keep what was said
            text = "".join(turn.streamed)
            turn.finish(text, MessageStatus.STOPPED, AnswerMode.LLM, passages=passages,
                        citations=parse_citations(text, passages), used_model=model, log_id=results.log_id)
            raise
        self._set_available(True)
        timings = Timings(retrieval_ms, out.first_token_ms, out.total_ms, turn.elapsed_ms(),
                          out.stats.get("prompt_tokens"), out.stats.get("output_tokens"), out.stats.get("load_ms"))
        return await turn.finish_async(out.text, MessageStatus.STOPPED if out.stopped else MessageStatus.OK,
                                       AnswerMode.LLM, passages=passages, citations=parse_citations(out.text, passages),
                                       used_model=out.model, log_id=results.log_id, timings=timings)

    async def _retrieval_only(self, turn: _Turn, passages: tuple[Passage, ...], results: Any,
                              on_notice: Optional[Callable[[str], Any]]) -> AnswerResult:
        """No server to answer: the banner (when due), then the passages grouped, every one cited."""
        notice = self._set_available(False)
        if notice and on_notice is not None:
            on_notice(notice)
        passages = reading_order(passages)  # the numbers the grouped text shows, in order
        text = retrieval_only_text(passages)
        turn.emit(text)
        return await turn.finish_async(text, MessageStatus.OK, AnswerMode.RETRIEVAL_ONLY, passages=passages,
                                       citations=all_citations(passages), notice=notice, log_id=results.log_id,
                                       timings=Timings(_retrieval_ms(results), total_ms=turn.elapsed_ms()))


class _Turn:
    """One question being answered: its thread, the user's message, the text streamed so far; ``finish``
    stores the assistant's message and makes the result."""

    def __init__(self, threads: ThreadStore, thread: Any, question: str,
                 on_token: Optional[Callable[[str], Any]]) -> None:
        self.threads, self.thread, self.question, self.on_token = threads, thread, question, on_token
        self.t0 = time.perf_counter()
        self.user_id = 0
        self.streamed: list[str] = []
        self.coverage_pct: Optional[int] = None  # set when retrieval came from a running build
        self.keyword_pct: Optional[int] = None

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000

    def emit(self, delta: str) -> None:
        self.streamed.append(delta)
        if self.on_token is not None:
            self.on_token(delta)

    def finish(self, text: str, status: str, mode: str, *, passages: tuple[Passage, ...] = (),
               citations: tuple[Citation, ...] = (), error: Optional[str] = None, kind: Optional[str] = None,
               notice: Optional[str] = None, used_model: Optional[str] = None, log_id: Optional[int] = None,
               timings: Optional[Timings] = None) -> AnswerResult:
        timings = timings or Timings(total_ms=self.elapsed_ms())
        if self.coverage_pct is not None:
            timings = replace(timings, building_coverage_pct=self.coverage_pct, building_keyword_pct=self.keyword_pct)
        thread = self.thread
        mid = self.threads.add_assistant_message(
            thread.id, content=text, status=status, mode=mode, error=error, model=used_model, passages=passages,
            citations=citations, timings=timings.to_json(), log_id=log_id)
        self.threads.touch(thread.id, model=used_model)
        return AnswerResult(thread.id, mid, self.user_id, self.question, text, citations, passages, used_model, mode,
                            status, error, kind, notice, timings)

    async def finish_async(self, *args: Any, **kwargs: Any) -> AnswerResult:
        """``finish`` in a worker thread (database work off the UI loop)."""
        return await asyncio.to_thread(self.finish, *args, **kwargs)


def _retrieval_ms(results: Any) -> float:
    """The search, plus the model's reranking when it was asked."""
    return results.latency_ms + (results.rerank.latency_ms if results.rerank else 0.0)
