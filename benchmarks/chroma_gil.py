"""How long a Chroma write keeps every other Python thread waiting: in-process vs helper process.

    python benchmarks/chroma_gil.py [--vectors 3000] [--batch 64]

A thread that sleeps 1 ms in a loop needs the GIL each time it wakes, so the longest interval
between its wake-ups while another thread writes vectors is the longest time the writer held the
GIL (plus scheduling noise, which both modes share). The UI thread of the desktop app is in the
same position as this ticker. Both modes write the same vectors, in the same batches, to a fresh
PersistentClient in one run: in this process (the CLI's way) and through ``ChromaHostClient``
(the app's way). Prints JSON with per-mode upsert time and ticker gaps, and their ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class Ticker:
    """A thread that wakes every millisecond and records how long each wake-up took to come."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        last = time.perf_counter()
        while not self._stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            self.gaps.append((now - last) * 1000)
            last = now

    def __enter__(self) -> "Ticker":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _measure(client, vectors: np.ndarray, batch: int) -> dict:
    from spar_desktop.core.retrieval.vector_store import ChromaCollection

    col = ChromaCollection(client, "gil-probe", "bench-model")
    calls, worst_gap = [], []
    with Ticker() as ticker:
        time.sleep(0.1)
        for start in range(0, len(vectors), batch):
            ids = [f"v{i}" for i in range(start, min(start + batch, len(vectors)))]
            seen = len(ticker.gaps)
            t0 = time.perf_counter()
            col.add(ids, vectors[start:start + batch], [{"doc_id": i} for i in ids])
            calls.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.003)  # let the ticker record the wake-up that ends this call's gap
            worst_gap.append(max(ticker.gaps[seen:], default=0.0))
        idle_from = len(ticker.gaps)
        time.sleep(0.5)  # the same ticker with nothing writing: the machine's own noise
        idle = ticker.gaps[idle_from:]
    return {
        "upserts": len(calls), "upsert_ms_median": round(statistics.median(calls), 1),
        "upsert_ms_max": round(max(calls), 1), "total_s": round(sum(calls) / 1000, 2),
        "ticker_gap_ms_median_per_upsert": round(statistics.median(worst_gap), 1),
        "ticker_gap_ms_max": round(max(worst_gap), 1), "idle_ticker_gap_ms_max": round(max(idle), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--dim", type=int, default=384)
    args = parser.parse_args(argv)

    from dataclasses import replace

    from spar_desktop.core.config import Settings
    from spar_desktop.core.retrieval.vector_store import make_chroma_client

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((args.vectors, args.dim)).astype(np.float32)
    result: dict = {"benchmark": "chroma_gil", "vectors": args.vectors, "batch": args.batch, "dim": args.dim}
    for mode, in_helper in (("in_process", False), ("helper_process", True)):
        settings = replace(Settings(data_dir=Path(tempfile.mkdtemp(prefix=f"spar-gil-{mode}-"))), chroma_process=in_helper)
        client = make_chroma_client(settings)
        try:
            result[mode] = _measure(client, vectors, args.batch)
        finally:
            if in_helper:
                client.shutdown()
    a, b = result["in_process"], result["helper_process"]
    result["ratio_ticker_gap_median_in_over_helper"] = round(
        a["ticker_gap_ms_median_per_upsert"] / max(b["ticker_gap_ms_median_per_upsert"], 1e-9), 1)
    result["ratio_ticker_gap_max_in_over_helper"] = round(a["ticker_gap_ms_max"] / max(b["ticker_gap_ms_max"], 1e-9), 1)
    result["ratio_total_time_helper_over_in"] = round(b["total_s"] / max(a["total_s"], 1e-9), 2)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
