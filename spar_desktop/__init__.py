"""SPAR Desktop: find and use what is buried in large legacy file shares."""

__version__ = "0.1.0"
