"""Text extraction per format and chunking, as pure functions over extracted text."""
