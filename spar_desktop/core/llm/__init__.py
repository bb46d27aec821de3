"""The language model connection, below chat, tagging, workspaces and retrieval.

Modules: ``client`` (the Ollama service: reachability, models, streaming, errors), ``connection``
(``ollama_generator``: the one place the CLI and the UI get a ``generate(prompt) -> reply``),
``helpers`` (one-shot calls besides answers: contextual chunks, listwise reranking, ``run_sync``),
``prompts`` (every prompt, versioned), ``reply`` (reading JSON out of a model's reply).

Nothing is imported here: ``reply`` and ``prompts`` are light; ``client`` loads ollama, httpx and
pydantic, which only a caller that talks to a model should pay for.
"""
