"""Developer runs behind command-line flags (``spar-desktop --smoke OUTDIR``). Never imported at normal start: only app.py imports them, lazily, when the flag is given."""
