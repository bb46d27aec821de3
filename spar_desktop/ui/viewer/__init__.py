"""The document viewer (PDF pages and extracted text, with passage highlights) and its ops."""
