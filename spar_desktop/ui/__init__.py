"""PySide6 layer: a thin UI over spar_desktop.core (the only package allowed to import Qt)."""

# First, before any widget exists: neutralise the binding's reference-count defect (qtcompat).
from spar_desktop.ui import qtcompat as _qtcompat  # noqa: F401
