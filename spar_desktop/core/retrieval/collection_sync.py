"""Writing a searcher's vectors into its Chroma collection: the one place a build writes vectors.

A HybridSearcher is built in memory (BM25 + an exact numpy matrix); the builder then calls
``sync_collection`` to make the collection hold exactly its keys and vectors, and gets back the
searcher with its dense side in Chroma. Constructors never write to a store.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Optional

from spar_desktop.core.progress import CancelToken
from spar_desktop.core.retrieval.searcher import ORIGINAL_TAG, TAG_FIELD, VERSION_FIELD, HybridSearcher
from spar_desktop.core.retrieval.vector_store import ChromaCollection

log = logging.getLogger(__name__)


def open_store_in_background(engine: Any) -> threading.Thread:
    """Open the engine's vector store (importing chromadb, starting its client: seconds on a
    cold process) on a thread while the build embeds, instead of after it. ``engine.chroma`` is
    behind the engine's lock, so the builder's own first use waits for this open and a failure
    here is simply met again, and reported, there."""
    def run() -> None:
        try:
            engine.chroma
        except Exception as exc:  # noqa: BLE001 - the builder's own open reports it
            log.debug("opening the vector store early failed: %s", exc)

    # Not a daemon: a build cancelled early lets the open finish rather than kill it mid-import at exit.
    thread = threading.Thread(target=run, name="spar-open-store")
    thread.start()
    return thread


def sync_collection(searcher: HybridSearcher, collection: ChromaCollection, *,
                    present: Optional[set[str]] = None,
                    cancel: Optional[CancelToken] = None) -> tuple[HybridSearcher, int]:
    """(the searcher over ``collection``, how many vectors were rewritten under their id).

    Missing ids are added and stale ones deleted; vectors kept under their id but out of date (an
    edited file's passages, evolved keys) are rewritten. ``present``: the ids the collection
    holds, when the caller has just listed them."""
    if searcher.vectors is None:
        raise ValueError("a searcher without an encoder has no vectors to store")
    metas = searcher.metas()
    collection.sync(searcher.keys, searcher.vectors, metas, cancel=cancel, present=present)
    rewritten = collection.reconcile(searcher.keys, searcher.vectors, metas,
                                     {TAG_FIELD: ORIGINAL_TAG, VERSION_FIELD: None})
    return searcher.with_collection(collection), rewritten
