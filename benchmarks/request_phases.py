"""Where one `spar ws create --prompt` spends its CPU (issue 30): runs the CLI in this process with
the phases of the request path wrapped, and prints process-time seconds per phase and peak RSS as
JSON. Run it as a user would run the command, on an index made by `spar index` (a copy of the data
dir, to measure a first request again):

    SPAR_DATA_DIR=/tmp/copy python benchmarks/request_phases.py ws create NAME --prompt "reports from 2019"

Phases overlap (encoder load happens inside tag matching or embedding); "total" includes imports.
"""

from __future__ import annotations

import json
import resource
import sys
import time

T0 = time.process_time()
from spar_desktop.cli import main  # noqa: E402 - imports are the first phase measured
import spar_desktop.commands.ws_cmd  # noqa: E402,F401
import spar_desktop.core.workspaces.manager as manager  # noqa: E402

from phase_timer import Phases  # noqa: E402 - benchmarks/, beside this script

IMPORTS_S = time.process_time() - T0
PHASES = Phases(time.process_time)
timed = PHASES.wrap


def instrument() -> None:
    import spar_desktop.core.embedding.encoder as encoder
    import spar_desktop.core.embedding.onnx_encoder as onnx
    import spar_desktop.core.workspaces.engine as engine
    import spar_desktop.core.workspaces.tag_index as tag_index
    import spar_desktop.core.workspaces.tag_vocab_sync as vocab

    for name in ("changed_tags", "index_words", "tag_texts", "missing_from", "embed_pending"):
        timed(vocab, name, f"vocabulary: {name}")
    timed(engine, "encoder_for", "encoder load")
    timed(onnx, "ensure_graph", "encoder load: ONNX graph (once per data dir)")
    timed(encoder.Encoder, "encode", "vocabulary: encode texts")
    timed(tag_index.TagIndex, "sync", "tag index sync (all of it)")
    timed(tag_index.TagIndex, "match", "tag matching")
    timed(manager, "build_filter", "request -> filter")
    timed(manager, "explain", "ranked admission + funnel (explain)")
    # Deciding whether candidates need summaries (it read every candidate twice before 2026-11-27).
    timed(manager.Workspaces, "summarise_candidates", "on-demand summaries (decide, compute)")


if __name__ == "__main__":
    instrument()
    code = main(sys.argv[1:])
    cpu = {"imports": IMPORTS_S, **{label: row[0] for label, row in PHASES.totals.items()},
           "total": time.process_time() - T0}
    print(json.dumps({"argv": sys.argv[1:], "exit_code": code, "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}, indent=1),
          file=sys.stderr)
