"""Qt-free core of SPAR Desktop. Nothing under this package may import Qt (enforced by tests)."""
