"""CLI command modules; each exposes ``register(subparsers)`` and is listed in spar_desktop.cli."""
