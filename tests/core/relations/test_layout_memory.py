"""The layout's memory is bounded by the nodes, not by how tightly they crowd (issue 34: `spar
relations export` of a 7,532-document graph was killed by the kernel at 23 GB). Nodes that coincide
used to deepen the Barnes–Hut grid to 2^16 cells a side, and every level allocated the whole grid."""

from __future__ import annotations

import subprocess
import sys
import textwrap

LIMIT_BYTES = 1_500 * 1024 * 1024  # the bound for a 7.5k-document export

SCRIPT = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import numpy as np
    from spar_desktop.core.relations.layout import forceatlas2

    rng = np.random.default_rng(7)
    n = 7500
    edges = rng.integers(0, n, size=(40_000, 2))
    start = rng.normal(size=(n, 2)) * 100.0
    start[:1500] = (3.0, 3.0)  # a fifth of the documents on one spot (isolated ones, copies)
    P = forceatlas2(n, edges, rng.random(len(edges)), iterations=3, initial=start)
    assert P.shape == (n, 2) and np.isfinite(P).all()
    print("peak MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
""")


def test_a_crowded_7500_node_layout_runs_within_1_5_gb():
    run = subprocess.run([sys.executable, "-c", SCRIPT.format(limit=LIMIT_BYTES)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "peak MB" in run.stdout
