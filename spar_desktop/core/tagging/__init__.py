"""Automatic tagging with human review: file summaries (one vector per file), suggestions from tag
text, neighbours and optionally an LLM, stored as unconfirmed file_tags, and the review queue.

Below ``workspaces`` in the dependency order (workspaces may import tagging, never the reverse)
and Qt-free like the rest of the core.
"""
