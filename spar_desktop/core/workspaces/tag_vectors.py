"""The tag vocabulary's vectors in a file of our own: one row per distinct text (issue 30).

A share's folder names repeat ("reports" under every project and year, "2019" under every
project), so 12,000 folder tags have ~500 distinct texts and 118,000 a few thousand: the store
keeps one vector per distinct text, and SQL says which tags have which text (tag_vocab_sync.py).
A search is an exact dot product over those rows (a few MB, memory-mapped), so a request
neither imports chromadb nor reads a collection back; it was the Chroma upserts of every tag
(90 s of the 100 s first request at 100,000 files) that made the vocabulary expensive.

Files, per model, under ``<data dir>/tag-vectors/<model>/``: ``vectors.f32`` (rows of ``dim``
float32, L2-normalised) and ``texts.jsonl`` (the text of each row), both append-only, written
under a file lock (the app and a CLI command may add at once). A row counts once both files have
it, so a process killed mid-append loses at most that append, never the store.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Sequence

import numpy as np

from spar_desktop.core.file_lock import file_lock

IDENTITIES = "identities.json"  # encoder settings → model id, so a request can skip loading the encoder


def text_key(text: str) -> str:
    """16 hex digits naming a text (stored in SQL as a tag's ``fp``: which row holds its vector)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def model_folder(root: Path, model_id: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9.+-]+", "_", model_id)[:60]
    return Path(root) / f"{slug}-{text_key(model_id)[:8]}"


def known_model(root: Path, identity: str) -> Optional[str]:
    """The model id an encoder with these settings had last time (None: load it to find out)."""
    try:
        return json.loads((Path(root) / IDENTITIES).read_text()).get(identity)
    except (OSError, ValueError, AttributeError):
        return None


def remember_model(root: Path, identity: str, model_id: str) -> None:
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    try:
        known = json.loads((root / IDENTITIES).read_text())
    except (OSError, ValueError):
        known = {}
    if known.get(identity) != model_id:
        known[identity] = model_id
        tmp = root / f"{IDENTITIES}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(known))
        os.replace(tmp, root / IDENTITIES)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class TextVectors:
    """Append-only text → vector rows; exact nearest-neighbour search by dot product."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._texts: list[str] = []
        self._rows: dict[str, int] = {}  # text key → row
        self._vectors: Optional[np.ndarray] = None
        self._dim = 0
        self._size = 0  # of texts.jsonl when read: refresh() reloads when it changed
        self._loaded = False
        self._exact = False  # the files hold exactly the rows read (no torn or orphaned tail)

    # -- reading -----------------------------------------------------------------------------
    def _load(self) -> None:
        """Read the texts (small) and map the vectors; the rows both files hold completely."""
        texts: list[str] = []
        path = self.folder / "texts.jsonl"
        self._size = path.stat().st_size if path.exists() else 0
        torn = False
        if path.exists():
            with open(path, "rb") as f:
                for line in f:
                    if not line.endswith(b"\n"):
                        torn = True  # a torn last line: not written completely
                        break
                    texts.append(json.loads(line))
        meta = self._meta()
        self._dim = int(meta.get("dim", 0))
        vec_path = self.folder / "vectors.f32"
        rows = vec_path.stat().st_size // (4 * self._dim) if self._dim and vec_path.exists() else 0
        n = min(len(texts), rows)
        # Both files hold exactly the rows read: an append needs no repair (see _rewrite_texts_if_longer).
        self._exact = not torn and len(texts) == n and (not self._dim or rows * 4 * self._dim == _size(vec_path))
        self._texts = texts[:n]
        self._rows = {text_key(t): i for i, t in enumerate(self._texts)}
        self._map(n)
        self._loaded = True

    def _map(self, n: int) -> None:
        vec_path = self.folder / "vectors.f32"
        self._vectors = (np.memmap(vec_path, dtype=np.float32, mode="r", shape=(n, self._dim))
                         if n else np.zeros((0, self._dim or 1), dtype=np.float32))

    def _changed_on_disk(self) -> bool:
        """Another process (or store object) appended since this one read the files."""
        return not self._loaded or _size(self.folder / "texts.jsonl") != self._size

    def _meta(self) -> dict:
        try:
            return json.loads((self.folder / "meta.json").read_text())
        except (OSError, ValueError):
            return {}

    def _ensure(self) -> None:
        if not self._loaded:
            self._load()

    def refresh(self) -> None:
        """Read the rows another process (or another store object) appended since (a stat)."""
        if not self._loaded:
            return
        try:
            size = (self.folder / "texts.jsonl").stat().st_size
        except OSError:
            size = 0
        if size != self._size:
            self._load()

    def __len__(self) -> int:
        self._ensure()
        return len(self._texts)

    def has(self, key: str) -> bool:
        self._ensure()
        return key in self._rows

    def text(self, key: str) -> Optional[str]:
        self._ensure()
        row = self._rows.get(key)
        return None if row is None else self._texts[row]

    def vector(self, text: str) -> Optional[np.ndarray]:
        self._ensure()
        row = self._rows.get(text_key(text))
        return None if row is None else np.array(self._vectors[row])

    def search(self, query: np.ndarray, floor: float) -> list[tuple[str, float]]:
        """(text key, cosine) of the rows at or above ``floor``, best first."""
        self._ensure()
        if not self._texts:
            return []
        sims = np.asarray(self._vectors @ np.asarray(query, dtype=np.float32).reshape(-1))
        keep = np.flatnonzero(sims >= floor)
        keep = keep[np.argsort(-sims[keep], kind="stable")]
        return [(text_key(self._texts[i]), float(sims[i])) for i in keep]

    # -- writing -----------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        with file_lock(self.folder / ".lock"):  # core/file_lock: flock, msvcrt on Windows
            yield

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Append the rows of ``texts`` not stored yet (another process may have added some).
        The files are read again only when another process appended since: re-reading every text
        on every batch was quadratic (4 s of a 605k-file share's first request)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        with self._locked():
            if self._changed_on_disk() or not self._exact:
                self._load()
            if not self._dim:
                self._dim = int(vectors.shape[1])
                (self.folder / "meta.json").write_text(json.dumps({"dim": self._dim}))
            new = {}
            for t, v in zip(texts, vectors):
                if text_key(t) not in self._rows:
                    new.setdefault(t, v)
            if not new:
                return
            n = len(self._texts)
            self._vectors = None  # let go of the map before the file changes
            with open(self.folder / "vectors.f32", "r+b" if (self.folder / "vectors.f32").exists() else "wb") as f:
                f.truncate(n * 4 * self._dim)  # drop a torn or orphaned tail
                f.seek(0, os.SEEK_END)
                f.write(np.stack(list(new.values())).astype(np.float32).tobytes())
                f.flush()
                os.fsync(f.fileno())
            if not self._exact:
                self._rewrite_texts_if_longer(n)
            with open(self.folder / "texts.jsonl", "ab") as f:
                f.write(b"".join(json.dumps(t).encode() + b"\n" for t in new))
                f.flush()
                os.fsync(f.fileno())
            for t in new:
                self._rows[text_key(t)] = len(self._texts)
                self._texts.append(t)
            self._size, self._exact = _size(self.folder / "texts.jsonl"), True
            self._map(len(self._texts))

    def _rewrite_texts_if_longer(self, n: int) -> None:
        """Texts beyond the vectors' rows (a torn line, or texts whose vectors never landed) go."""
        path = self.folder / "texts.jsonl"
        if not path.exists():
            return
        with open(path, "rb") as f:
            lines = f.readlines()
        if len(lines) != n or (lines and not lines[-1].endswith(b"\n")):
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(b"".join(line for line in lines[:n] if line.endswith(b"\n")))
            os.replace(tmp, path)
