"""PySide6 layer: a thin UI over spar_desktop.core (the only package allowed to import Qt)."""
