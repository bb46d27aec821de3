"""One process-wide lock around PyMuPDF: it is not thread-safe, and a workspace build (extraction),
a scan (metadata) and the viewer (rendering) may use it from different worker threads at once."""

import threading

PYMUPDF_LOCK = threading.RLock()
