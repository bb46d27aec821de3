"""Chat over a workspace: grounded, streaming answers from a local Ollama server, with numbered
citations, persisted threads, a retrieval-only mode when no server is reachable, and optional LLM
helpers (request keywords, contextual chunks, listwise reranking).

Modules: ``models`` (tables), ``prompt`` (passages, prompt, citations), ``client`` (the Ollama
service: reachability, models, streaming, errors), ``threads`` (thread store + feedback),
``share`` (Markdown export, .sparws hooks), ``session`` (``ChatSession.answer``), ``ollama_tasks``
(one-shot Ollama calls besides answers: request keywords, contextual chunks, reranking).

Nothing is imported here on purpose: importing ``chat.models`` (the tables, which ``schema`` and
the migrations load) must not pull in the ollama client, httpx or pydantic.
"""
