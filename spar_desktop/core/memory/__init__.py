"""Evolving Retrieval Memory (ERM, paper 001 §4): keys that learn from validated feedback.

- units.py — expansion units (LLM keywords / hypothetical answer, or local feedback)
- learner.py — attribution, softmax accumulation, bounded memory, batching, evolved keys
- models.py, store.py — the SQL tables and their reading/writing
- feedback.py — what the app calls: record_feedback, evolve_now, memory_stats, reset_memory
- protocol.py — the evaluation protocol (evolve on some queries, measure on held-out ones)
"""

from spar_desktop.core.memory.config import ERMConfig

__all__ = ["ERMConfig"]
