"""The relations package's user-facing error, in a module of its own so every module (and the
app's window, which catches it) imports it without importing the scope's queries."""

from __future__ import annotations


class RelationsError(ValueError):
    """A user-facing problem (nothing indexed, unknown file, nothing built); says what to do."""
