"""Settings: where data lives, which servers to talk to, and pipeline knobs.

Resolution order (later wins): built-in defaults < ``settings.json`` in the data dir <
environment (``SPAR_DATA_DIR``, ``SPAR_DATABASE_URL``, ``SPAR_CHROMA_URL``, ``SPAR_CHROMA_PROCESS``,
``OLLAMA_HOST``, ``SPAR_AUTO_TAGGING``, ``SPAR_EMBED_RUNTIME``, ``SPAR_PRELOAD``) <
explicit command-line flags. An unset encoder runtime is the data dir's own (``data_dir_runtime``).

``load_settings`` is the one place that reads these variables; everything else gets a
``Settings`` (and its ``layout``, every path under the data dir: core/data_layout.py). Settings
sits just above ``documents`` in the core's layers: it knows the per-file reading budget.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlparse

from platformdirs import user_data_dir

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.file_format import BadVersion, NewerVersion, NotThisFormat, check_version

SETTINGS_FILE = "settings.json"
# settings.json carries {"version": SETTINGS_VERSION}; a file without it is version 1 (0.1.0 wrote
# none). New keys do not change it (unknown keys are ignored); a key changing meaning does, and
# an older app then refuses the file with SettingsTooNewError instead of misreading it.
SETTINGS_VERSION = 1
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_MODEL = "llama3.2"


WORKSPACE_UPDATE_MODES = ("auto", "ask", "never")
EMBED_RUNTIMES = ("onnx", "onnx-int8", "torch")
# The encoder of a data dir that has no vectors yet: int8, whose nDCG@10 is within noise of fp32's on
# the four development sets (paired CIs) and which encodes faster (1.2x median in a contended run,
# ~1.2-1.5x from quiet-machine figures; benchmarks/results/int8_quality.md).
DEFAULT_EMBED_RUNTIME = "onnx-int8"


def default_embed_runtime() -> str:
    """A new data dir's encoder: int8, except in the desktop bundle, which ships no int8 quantiser
    (onnxruntime.transformers, which it needs, imports torch): fp32 there."""
    return "onnx" if getattr(sys, "frozen", False) else DEFAULT_EMBED_RUNTIME


RUNTIME_LABELS = {"onnx": "fp32", "onnx-int8": "int8", "torch": "fp32 (sentence-transformers)"}


class SettingsError(ValueError):
    """A setting has a value the app cannot use; the message says which and why."""


class SettingsTooNewError(SettingsError):
    """settings.json was written by a newer SPAR Desktop, in a format this one cannot read."""


def default_data_dir() -> Path:
    return Path(user_data_dir("spar-desktop", "SPAR"))


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=default_data_dir)
    database_url: Optional[str] = None  # None: SQLite file in data_dir
    chroma_url: Optional[str] = None  # None: PersistentClient under data_dir
    # Host that PersistentClient in a helper process (the desktop app): in-process Chroma holds
    # the GIL for whole calls, which froze the window (see core/retrieval/chroma_host.py).
    # A property of the running program, not a preference: never written to settings.json.
    # None: the program's default (the app: a helper process; the CLI and scripts: in-process).
    chroma_process: Optional[bool] = field(default=None, metadata={"stored": False})
    # The encoder (onnx: fp32 | onnx-int8 | torch: fp32 through sentence-transformers). Stored
    # once chosen; unset, load_settings gives the data dir the runtime its vectors were made with
    # (a data dir embedded before int8 became the default keeps fp32 until the user switches),
    # and a data dir with no vectors DEFAULT_EMBED_RUNTIME. None (Settings() itself): the
    # encoder's reference, fp32. ``embed_runtime_origin`` says which of these applied.
    embed_runtime: Optional[str] = None
    embed_runtime_origin: str = field(default="default", metadata={"stored": False})
    # A property of the running program: whether the app loads the search engine at start.
    preload: bool = field(default=True, metadata={"stored": False})
    ollama_host: str = DEFAULT_OLLAMA_HOST
    ollama_model: str = DEFAULT_OLLAMA_MODEL
    embedding_device: str = "auto"  # auto | cpu | cuda
    chunk_child_tokens: int = 200
    chunk_parent_tokens: int = 800
    chunk_overlap_tokens: int = 30
    workspace_idle_archive_days: int = 30
    # Settings ▸ Workspaces: when the index changed under a built workspace, the app updates it
    # in the background ('auto'), offers to ('ask'), or only says so ('never').
    workspace_updates: str = "auto"
    # Reading files (Settings ▸ Reading files): the per-file budget and OCR.
    ocr_enabled: bool = True  # scanned pages and images are read by OCR when a workspace needs them
    extract_max_text_mb: int = 2  # text kept per document, millions of characters (~1,000 pages each)
    extract_max_seconds: int = 120  # wall time of one file's extraction
    archive_max_inflated_mb: int = 512  # what one archive member or attachment may inflate to
    auto_tagging: bool = True  # the app suggests tags in the background after a scan finds new files
    # Workspace requests (issue 32): Ollama reads the request too, beside the rules, when it answers
    # within the timeout (seconds); off, or no answer in time: the rules alone, as before.
    request_llm: bool = True
    request_llm_timeout_s: float = 3.0
    # Search and chat let Ollama rerank the top results when retrieval is unsure (top fused score
    # below the calibrated tau; core/retrieval/conditional_rerank.py). Off: the fused order, always.
    rerank_results: bool = True

    def __post_init__(self) -> None:
        # The one place a host is normalised: settings.json, OLLAMA_HOST, the dialog and replace()
        # all end here, so every client gets the same URL ('host[:port]' → http://host:port).
        # A value with no host is left as typed for validate() to name.
        try:
            if urlparse(_with_scheme(self.ollama_host.strip())).hostname:
                object.__setattr__(self, "ollama_host", normalize_ollama_host(self.ollama_host))
        except ValueError:  # e.g. a port that is not a number: validate() says so
            pass

    @property
    def layout(self) -> DataLayout:
        """Every path under the data dir."""
        return DataLayout(self.data_dir)

    def extraction_budget(self) -> ExtractionBudget:
        """The per-file budget readers enforce (core/documents/budget.py)."""
        return ExtractionBudget(max_chars=self.extract_max_text_mb * 1_000_000,
                                max_seconds=float(self.extract_max_seconds),
                                max_inflated_bytes=self.archive_max_inflated_mb * 1024 * 1024)

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.layout.library_db}"

    def validate(self) -> "Settings":
        """Raise SettingsError with a clear message for the first unusable value."""
        try:
            host = urlparse(_with_scheme(self.ollama_host))
            host.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError:
            host = None
        if host is None or not host.hostname:
            raise SettingsError(f"Ollama host '{self.ollama_host}' is not a host or URL")
        if self.chroma_url and urlparse(self.chroma_url).scheme not in ("http", "https"):
            raise SettingsError(f"Chroma server URL '{self.chroma_url}' must start with http:// or https://")
        if self.database_url and "://" not in self.database_url:
            raise SettingsError(
                f"Database URL '{self.database_url}' is not an SQLAlchemy URL "
                "(e.g. postgresql+psycopg://user@host/db)"
            )
        if self.workspace_updates not in WORKSPACE_UPDATE_MODES:
            raise SettingsError(f"Keeping workspaces up to date must be one of {', '.join(WORKSPACE_UPDATE_MODES)}, "
                                f"not '{self.workspace_updates}'")
        if self.embed_runtime is not None and self.embed_runtime not in EMBED_RUNTIMES:
            raise SettingsError(f"Embedding runtime must be one of {', '.join(EMBED_RUNTIMES)}, "
                                f"not '{self.embed_runtime}'")
        if self.embedding_device not in ("auto", "cpu", "cuda"):
            raise SettingsError(f"Embedding device must be auto, cpu or cuda, not '{self.embedding_device}'")
        if not 32 <= self.chunk_child_tokens <= 256:
            raise SettingsError("Child chunk size must be between 32 and 256 tokens (the encoder's limit)")
        if self.chunk_parent_tokens < self.chunk_child_tokens:
            raise SettingsError("Parent chunk size must be at least the child chunk size")
        if not 1 <= self.extract_max_text_mb <= 10_000:
            raise SettingsError("The text limit per file must be between 1 and 10,000 MB")
        if not 1 <= self.extract_max_seconds <= 86_400:
            raise SettingsError("The time limit per file must be between 1 second and a day")
        if not 1 <= self.archive_max_inflated_mb <= 100_000:
            raise SettingsError("The inflated-size limit per archive member must be between 1 and 100,000 MB")
        if not 0 <= self.chunk_overlap_tokens < self.chunk_child_tokens:
            raise SettingsError("Chunk overlap must be smaller than the child chunk size")
        return self

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["data_dir"] = str(self.data_dir)
        return data

    def save(self) -> Path:
        """Write settings.json atomically into the data dir (never into user folders)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        target = self.layout.settings_file
        try:
            stored = settings_version(json.loads(target.read_text(encoding="utf-8")), target)
        except (OSError, ValueError):  # missing or unreadable: nothing to protect
            stored = SETTINGS_VERSION
        if stored > SETTINGS_VERSION:  # a newer app's settings: never replaced by an older one
            raise FileExistsError(errno.EEXIST, f"{SETTINGS_FILE} was written by a newer SPAR Desktop "
                                  f"(settings version {stored}) and is kept as it is", str(target))
        tmp = target.with_suffix(".tmp")
        data = {"version": SETTINGS_VERSION}
        data.update({k: v for k, v in self.to_json().items() if k in STORED_FIELDS})
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, target)
        return target


# The preferences settings.json holds (the data dir is where it is; program properties are not kept).
STORED_FIELDS = frozenset(f.name for f in fields(Settings) if f.metadata.get("stored", True) and f.name != "data_dir")


def load_settings(data_dir: Optional[str | Path] = None, *, app: bool = False, preferences: bool = True,
                  **overrides: Any) -> Settings:
    """Build the effective Settings for a data dir (see module docstring for precedence).

    ``app``: the desktop app's program properties (Chroma in a helper process unless
    SPAR_CHROMA_PROCESS=0, see core/retrieval/chroma_host.py). ``preferences=False``: built-in
    defaults for every preference, settings.json and preference variables ignored (the app's way
    on when settings.json cannot be read). The only reader of the environment in SPAR."""
    env = os.environ
    base_dir = Path(data_dir or env.get("SPAR_DATA_DIR") or default_data_dir()).expanduser()
    values: dict[str, Any] = {"chroma_process": True} if app else {}
    if preferences:
        values.update(_stored_values(DataLayout(base_dir).settings_file))
        for var, key, convert in _PREFERENCE_VARIABLES:
            if env.get(var):
                values[key] = convert(env[var])
    if env.get("SPAR_CHROMA_PROCESS"):
        values["chroma_process"] = env_flag(env["SPAR_CHROMA_PROCESS"])
    if values.get("embed_runtime"):
        values["embed_runtime_origin"] = "settings"
    if env.get("SPAR_EMBED_RUNTIME", "").strip():
        values["embed_runtime"] = env["SPAR_EMBED_RUNTIME"].strip().lower()
        values["embed_runtime_origin"] = "environment"
    if env.get("SPAR_PRELOAD"):
        values["preload"] = env["SPAR_PRELOAD"].strip() != "0"  # 0: nothing loads until it is needed
    values.update({k: v for k, v in overrides.items() if v is not None})
    if overrides.get("embed_runtime"):
        values["embed_runtime_origin"] = "option"
    if not values.get("embed_runtime"):
        kept = data_dir_runtime(DataLayout(base_dir))
        values["embed_runtime"] = kept or default_embed_runtime()
        values["embed_runtime_origin"] = "data dir" if kept else "default"
    settings = replace(Settings(data_dir=base_dir), **values)
    return settings.validate()


def data_dir_runtime(layout: DataLayout) -> Optional[str]:
    """The runtime of the vectors this data dir embedded last (the embedding cache's newest row:
    one indexed read), None when it has none. How a data dir built with fp32 before int8 became
    the default keeps fp32: its workspaces and cache stay valid until the user switches."""
    path = layout.embeddings
    if not path.is_file():
        return None
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            row = con.execute("SELECT model_id FROM documents ORDER BY rowid DESC LIMIT 1").fetchone()
        finally:
            con.close()
    except sqlite3.Error:  # unreadable or another schema: the cache itself will say so when opened
        return None
    if row is None:
        return None
    return "onnx-int8" if "+onnx-int8" in str(row[0]) else "onnx"


def runtime_note(settings: Settings) -> str:
    """One line for `spar status` and Settings: which encoder, and why this one."""
    label = RUNTIME_LABELS.get(settings.embed_runtime or "onnx", settings.embed_runtime or "fp32")
    why = {"settings": "chosen in Settings", "environment": "set by SPAR_EMBED_RUNTIME",
           "option": "set on the command line",
           "data dir": "kept: this data dir's vectors were made with it",
           "default": "the default for a new data dir"}.get(settings.embed_runtime_origin, "")
    note = f"{label} ({why})" if why else label
    if settings.embed_runtime != default_embed_runtime() and settings.embed_runtime_origin == "data dir":
        note += (f"; {RUNTIME_LABELS[default_embed_runtime()]} embeds faster at the same quality, and choosing it "
                 "re-embeds each workspace at its next build")
    return note


def _stored_values(settings_path: Path) -> dict[str, Any]:
    """The preferences settings.json holds ({} without one); SettingsError when it cannot be used."""
    if not settings_path.is_file():
        return {}
    try:
        stored = json.loads(settings_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SettingsError(f"Cannot read {settings_path}: {exc}") from exc
    if not isinstance(stored, dict):
        raise SettingsError(f"Cannot read {settings_path}: not a JSON object")
    version = settings_version(stored, settings_path)
    if version > SETTINGS_VERSION:
        raise SettingsTooNewError(
            f"{settings_path} was written by a newer SPAR Desktop (settings version {version}; this "
            f"version reads up to {SETTINGS_VERSION}): install that version or newer to use those settings"
        )
    return {k: v for k, v in stored.items() if k in STORED_FIELDS}


def settings_version(stored: dict, path: Path) -> int:
    """The format version of a parsed settings.json: 1 when absent (files 0.1.0 wrote). A newer one
    is returned as it is: the caller decides (load refuses, save keeps the file)."""
    try:
        return check_version(stored, None, SETTINGS_VERSION, default=1)
    except NewerVersion as exc:
        return exc.version
    except BadVersion as exc:
        raise SettingsError(f"Cannot read {path}: 'version' must be a whole number from 1, "
                            f"not {exc.version!r}") from None
    except NotThisFormat:  # not an object: read as version 1, refused elsewhere
        return 1


def env_flag(value: str) -> bool:
    """An on/off environment variable: 0, false, no and off are off; anything else is on."""
    return value.strip().lower() not in ("0", "false", "no", "off")


def normalize_ollama_host(value: str) -> str:
    """Accept OLLAMA_HOST the way the ollama tools do: 'host', 'host:port' or a full URL."""
    value = value.strip()
    has_scheme = "://" in value
    parsed = urlparse(_with_scheme(value))
    host = parsed.hostname or "127.0.0.1"
    if host == "0.0.0.0":  # the server's bind-all address: the client talks to this machine
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    # A bare host gets Ollama's port; a full URL keeps its own (80/443 when it names none).
    port = parsed.port or (None if has_scheme else 11434)
    return f"{parsed.scheme}://{host}{f':{port}' if port else ''}{parsed.path.rstrip('/')}"


def _with_scheme(host: str) -> str:
    return host if "://" in host else f"http://{host}"


# Variables that override a stored preference: (variable, field, conversion). OLLAMA_HOST is
# normalised by Settings itself, like every other host.
_PREFERENCE_VARIABLES = (("SPAR_DATABASE_URL", "database_url", str), ("SPAR_CHROMA_URL", "chroma_url", str),
                         ("OLLAMA_HOST", "ollama_host", str), ("SPAR_AUTO_TAGGING", "auto_tagging", env_flag))
