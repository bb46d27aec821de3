"""What SPAR's own code adds around a language model call, measured against the project's scripted
Ollama server (tests/support/fake_ollama.py: it answers at once, so what is left is our client,
prompt building and reply checks; a real model adds its generation time on top).

Side by side in one run: reading a workspace request by the rules alone, with the model, and with
no server listening; listwise reranking of 10 passages. Prints JSON (medians of --runs calls).
Usage: python benchmarks/llm_overhead.py [--runs 15] [--out benchmarks/results/llm_overhead.json]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spar_desktop.core.config import Settings  # noqa: E402
from spar_desktop.core.llm.client import Ollama  # noqa: E402
from spar_desktop.core.llm.helpers import LLMHelpers  # noqa: E402
from spar_desktop.core.workspaces.request import parse_request  # noqa: E402
from spar_desktop.core.workspaces.request_merge import read_request  # noqa: E402
from tests.support.fake_ollama import FakeOllama  # noqa: E402

REQUEST = "What did the board decide in May 2019?"
READING = {"keywords": ["board decisions"], "since": "2019-05-01", "until": "2019-05-31"}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # the first call pays one-off imports
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 2)


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    fake = FakeOllama().start()
    try:
        settings = replace(Settings(data_dir=Path(tempfile.mkdtemp())), ollama_host=fake.url)
        fake.set(reply=json.dumps(READING))
        with_model = median_ms(lambda: read_request(REQUEST, settings), args.runs)
        model_used = read_request(REQUEST, settings).since is not None
        rules = median_ms(lambda: parse_request(REQUEST), args.runs)
        no_server = median_ms(lambda: read_request(REQUEST, replace(settings, ollama_host=closed_port_url())), args.runs)
        fake.set(reply=json.dumps({"ranking": list(range(10, 0, -1))}))
        helpers = LLMHelpers(Ollama(fake.url, "llama3.2"))
        passages = [f"passage {i} on pump seals and valve tests " * 15 for i in range(10)]
        rerank = median_ms(lambda: helpers.rerank("pump seal failures", passages), args.runs)
    finally:
        fake.stop()
    result = {
        "runs": args.runs,
        "request_rules_only_ms": rules,
        "request_with_scripted_model_ms": with_model,
        "request_model_reading_applied": model_used,
        "request_no_server_ms": no_server,
        "rerank_10_passages_scripted_model_ms": rerank,
        "note": "a real model adds its generation time; request reading waits at most request_llm_timeout_s",
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
