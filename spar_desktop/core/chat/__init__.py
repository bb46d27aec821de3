"""Chat over a workspace: grounded, streaming answers from a local Ollama server, with numbered
citations, persisted threads, a retrieval-only mode when no server is reachable, and optional LLM
helpers. The Ollama client itself lives in ``core.llm`` (below chat and tagging).

Modules: ``models`` (tables), ``prompt`` (passages, prompt, citations), ``threads`` (thread store +
feedback), ``share`` (Markdown export, .sparws hooks), ``session`` (``ChatSession.answer``).

Nothing is imported here on purpose: importing ``chat.models`` (the tables, which ``schema`` and
the migrations load) must not pull in the ollama client, httpx or pydantic.
"""
