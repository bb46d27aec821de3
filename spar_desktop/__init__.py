"""SPAR Desktop: find and use what is buried in large legacy file shares."""

import os as _os

# Nothing of ours is queued for upload anywhere. ONNX Runtime (our encoder, and Chroma's) records
# a device id and telemetry events under ~/.cache/Microsoft unless told otherwise before it
# initialises; its Python disable_telemetry_events() comes too late for that first event. Both
# spellings: the variable was renamed between releases. A user's own setting wins.
_os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
_os.environ.setdefault("ORT_TELEMETRY_DISABLED", "1")
_os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # Chroma's product telemetry

__version__ = "0.1.0"
