"""Text extraction per format and chunking, as pure functions over extracted text.

Public entry points: ``extract`` / ``extract_text_string`` (files or strings to
``ExtractedDocument``), ``chunk_document`` and ``contextualize`` (documents to ``Chunk`` lists).
Importing this package is cheap: pymupdf, python-docx and BeautifulSoup load on first use.
"""

from spar_desktop.core.documents.chunking import chunk_document, contextualize
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import detect_format, extract, extract_text_string
from spar_desktop.core.documents.types import Chunk, ChunkerConfig, ExtractedDocument, PageText

__all__ = [
    "Chunk", "ChunkerConfig", "ExtractedDocument", "ExtractionError", "PageText",
    "chunk_document", "contextualize", "detect_format", "extract", "extract_text_string",
]
