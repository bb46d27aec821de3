"""The one exception extraction raises, so callers catch a single type per file."""

from __future__ import annotations


class ExtractionError(Exception):
    """A file could not be read as its format (corrupt, encrypted, not what its name says).

    ``message`` is meant for people: the library stores it as the file's error and the UI shows
    it verbatim, e.g. "PDF is password-protected".
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
