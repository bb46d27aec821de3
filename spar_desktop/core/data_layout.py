"""Every path SPAR writes under the data dir, built in one place.

``Settings.layout`` gives the layout of the effective settings; code that has only a data dir
(scripts, the evaluation runner) makes ``DataLayout(data_dir)``. Nothing else joins names onto
the data dir, so moving a file means changing one line here. A PostgreSQL index or a Chroma
server lives elsewhere; their local paths are then simply unused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DataLayout:
    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).expanduser())

    # -- the metadata index and settings -------------------------------------------------------
    @property
    def settings_file(self) -> Path:
        return self.root / "settings.json"

    @property
    def library_db(self) -> Path:
        """The SQLite metadata index (unless a database URL names another database)."""
        return self.root / "library.sqlite3"

    @property
    def scan_lock(self) -> Path:
        """Scans of one index take turns across processes (core/library/scanner.py)."""
        return self.root / ".scan.lock"

    # -- vectors and caches ----------------------------------------------------------------------
    @property
    def chroma(self) -> Path:
        """The local Chroma PersistentClient's folder (workspace collections)."""
        return self.root / "chroma"

    @property
    def chroma_lock(self) -> Path:
        """Held by the process that has ``chroma`` open; beside the store, not in it, so a damaged
        store can be moved aside while the lock stays (core/store_lock.py)."""
        return self.root / "chroma.lock"

    @property
    def embeddings(self) -> Path:
        """The shared embedding cache (core/embedding/cache.py)."""
        return self.root / "embeddings.sqlite3"

    @property
    def ocr_cache(self) -> Path:
        return self.root / "cache" / "ocr.sqlite3"

    @property
    def onnx_cache(self) -> Path:
        """Where the encoder's built ONNX graph is kept (core/embedding/onnx_encoder.py;
        $SPAR_MODEL_CACHE, read there, shares one cache between data dirs: plumbing, not a setting)."""
        return self.root / "cache" / "onnx"

    @property
    def alpha_model(self) -> Path:
        """A learned fusion weight (``spar eval --save-alpha``); workspaces use it when present."""
        return self.root / "alpha.json"

    @property
    def rerank_calibration(self) -> Path:
        """The reranking threshold tau (``spar eval --calibrate-rerank``); the shipped default without it."""
        return self.root / "rerank.json"

    # -- per workspace -----------------------------------------------------------------------------
    @property
    def workspaces(self) -> Path:
        return self.root / "workspaces"

    def workspace_dir(self, collection: str) -> Path:
        return self.workspaces / collection

    def build_lock(self, collection: str) -> Path:
        """Held by the process building the workspace (core/workspaces/build_lock.py)."""
        return self.workspace_dir(collection) / "build.lock"

    def searcher_dir(self, collection: str) -> Path:
        """The workspace's saved searcher (core/retrieval/searcher_state.py)."""
        return self.workspace_dir(collection) / "searcher"

    # -- the rest --------------------------------------------------------------------------------
    @property
    def relations(self) -> Path:
        """Stored relations, one folder per scope and method (core/relations/persist.py)."""
        return self.root / "relations"

    @property
    def topic_proposal(self) -> Path:
        return self.root / "tagging" / "topic_proposal.json"

    @property
    def tag_grouping(self) -> Path:
        """The CLI's saved tag grouping proposal (``spar tags group``)."""
        return self.root / "tagging" / "tag_grouping.json"

    @property
    def sample_corpus(self) -> Path:
        """The bundled sample corpus, copied here (never indexed from inside the package)."""
        return self.root / "sample_corpus"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def app_lock(self) -> Path:
        """One desktop app per data dir (ui/app.py)."""
        return self.root / "spar-desktop.lock"

    @property
    def window_state(self) -> Path:
        return self.root / "ui-state.ini"
