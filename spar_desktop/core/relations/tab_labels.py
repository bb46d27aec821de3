"""What the relations tab names, kept light (no scipy/networkx) for the window's start: the methods
it offers with their labels, and the error that says nothing is built yet."""

from __future__ import annotations

from spar_desktop.core.relations.errors import RelationsError

# The methods the tab offers, default first, with the labels the combo, status line and messages show.
METHOD_LABELS = (("edrmq", "EDR-MQ (words + meaning)"), ("cooc", "Co-occurrence"), ("tfidf", "TF-IDF"))


class RelationsNotBuilt(RelationsError):
    """No relations are stored for the scope nor for the whole index: asking about one file
    (the file table's "Show related files in graph") never starts a scope-wide build by itself."""
