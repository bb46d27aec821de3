"""Text extraction per format and chunking, as pure functions over extracted text.

Entry points: ``extract.extract`` / ``extract.extract_text_string`` (files or strings to
``ExtractedDocument``), ``chunking.chunk_document`` and ``chunking.contextualize`` (documents to
``Chunk`` lists), ``reading.read_document`` (extraction with OCR and its cache).

Nothing is imported here on purpose: Settings (core/config.py) needs ``budget`` and every `spar`
command loads Settings, so importing this package must cost nothing; pymupdf, python-docx and
BeautifulSoup load on first use in their readers.
"""
