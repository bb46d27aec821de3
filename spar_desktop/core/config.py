"""Settings: where data lives, which servers to talk to, and pipeline knobs.

Resolution order (later wins): built-in defaults < ``settings.json`` in the data dir <
environment (``SPAR_DATA_DIR``, ``SPAR_DATABASE_URL``, ``SPAR_CHROMA_URL``, ``SPAR_CHROMA_PROCESS``,
``OLLAMA_HOST``, ``SPAR_AUTO_TAGGING``) <
explicit command-line flags.
"""

from __future__ import annotations

import errno
import json
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Optional
from urllib.parse import urlparse

SETTINGS_FILE = "settings.json"
# settings.json carries {"version": SETTINGS_VERSION}; a file without it is version 1 (0.1.0 wrote
# none). New keys do not change it (unknown keys are ignored); a key changing meaning does, and
# an older app then refuses the file with SettingsTooNewError instead of misreading it.
SETTINGS_VERSION = 1
DEFAULT_OLLAMA_HOST = "http://127.0.0.1:11434"
DEFAULT_OLLAMA_MODEL = "llama3.2"


class SettingsError(ValueError):
    """A setting has a value the app cannot use; the message says which and why."""


class SettingsTooNewError(SettingsError):
    """settings.json was written by a newer SPAR Desktop, in a format this one cannot read."""


def default_data_dir() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("spar-desktop", "SPAR"))


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=default_data_dir)
    database_url: Optional[str] = None  # None: SQLite file in data_dir
    chroma_url: Optional[str] = None  # None: PersistentClient under data_dir
    # Host that PersistentClient in a helper process (the desktop app): in-process Chroma holds
    # the GIL for whole calls, which froze the window (see core/retrieval/chroma_host.py).
    # A property of the running program, not a preference: never written to settings.json.
    chroma_process: bool = field(default=False, metadata={"stored": False})
    ollama_host: str = DEFAULT_OLLAMA_HOST
    ollama_model: str = DEFAULT_OLLAMA_MODEL
    embedding_device: str = "auto"  # auto | cpu | cuda
    chunk_child_tokens: int = 200
    chunk_parent_tokens: int = 800
    chunk_overlap_tokens: int = 30
    workspace_idle_archive_days: int = 30
    # Reading files (Settings ▸ Reading files): the per-file budget and OCR.
    ocr_enabled: bool = True  # scanned pages and images are read by OCR when a workspace needs them
    extract_max_text_mb: int = 2  # text kept per document, millions of characters (~1,000 pages each)
    extract_max_seconds: int = 120  # wall time of one file's extraction
    archive_max_inflated_mb: int = 512  # what one archive member or attachment may inflate to
    auto_tagging: bool = True  # the app suggests tags in the background after a scan finds new files

    def extraction_budget(self):
        """The per-file budget readers enforce (core/documents/budget.py)."""
        from spar_desktop.core.documents.budget import ExtractionBudget

        return ExtractionBudget(max_chars=self.extract_max_text_mb * 1_000_000,
                                max_seconds=float(self.extract_max_seconds),
                                max_inflated_bytes=self.archive_max_inflated_mb * 1024 * 1024)

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'library.sqlite3'}"

    def validate(self) -> "Settings":
        """Raise SettingsError with a clear message for the first unusable value."""
        host = urlparse(self.ollama_host if "://" in self.ollama_host else f"http://{self.ollama_host}")
        if not host.hostname:
            raise SettingsError(f"Ollama host '{self.ollama_host}' is not a host or URL")
        if self.chroma_url and urlparse(self.chroma_url).scheme not in ("http", "https"):
            raise SettingsError(f"Chroma server URL '{self.chroma_url}' must start with http:// or https://")
        if self.database_url and "://" not in self.database_url:
            raise SettingsError(
                f"Database URL '{self.database_url}' is not an SQLAlchemy URL "
                "(e.g. postgresql+psycopg://user@host/db)"
            )
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
        target = self.data_dir / SETTINGS_FILE
        try:
            stored = settings_version(json.loads(target.read_text(encoding="utf-8")), target)
        except (OSError, ValueError):  # missing or unreadable: nothing to protect
            stored = SETTINGS_VERSION
        if stored > SETTINGS_VERSION:  # a newer app's settings: never replaced by an older one
            raise FileExistsError(errno.EEXIST, f"{SETTINGS_FILE} was written by a newer SPAR Desktop "
                                  f"(settings version {stored}) and is kept as it is", str(target))
        tmp = target.with_suffix(".tmp")
        data = {"version": SETTINGS_VERSION}
        data.update({k: v for k, v in self.to_json().items() if k in _STORED})
        tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
        os.replace(tmp, target)
        return target


_STORED = {f.name for f in fields(Settings) if f.metadata.get("stored", True) and f.name != "data_dir"}


def load_settings(data_dir: Optional[str | Path] = None, **overrides: Any) -> Settings:
    """Build the effective Settings for a data dir (see module docstring for precedence)."""
    env = os.environ
    base_dir = Path(data_dir or env.get("SPAR_DATA_DIR") or default_data_dir()).expanduser()
    values: dict[str, Any] = {}
    settings_path = base_dir / SETTINGS_FILE
    if settings_path.is_file():
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
        values.update({k: v for k, v in stored.items() if k in _STORED})
    if env.get("SPAR_DATABASE_URL"):
        values["database_url"] = env["SPAR_DATABASE_URL"]
    if env.get("SPAR_CHROMA_URL"):
        values["chroma_url"] = env["SPAR_CHROMA_URL"]
    if env.get("SPAR_CHROMA_PROCESS"):
        values["chroma_process"] = env_flag(env["SPAR_CHROMA_PROCESS"])
    if env.get("OLLAMA_HOST"):
        values["ollama_host"] = normalize_ollama_host(env["OLLAMA_HOST"])
    if env.get("SPAR_AUTO_TAGGING"):
        values["auto_tagging"] = env_flag(env["SPAR_AUTO_TAGGING"])
    values.update({k: v for k, v in overrides.items() if v is not None})
    settings = replace(Settings(data_dir=base_dir), **values)
    return settings.validate()


def settings_version(stored: dict, path: Path) -> int:
    """The format version of a parsed settings.json: 1 when absent (files 0.1.0 wrote)."""
    version = stored.get("version", 1) if isinstance(stored, dict) else 1
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SettingsError(f"Cannot read {path}: 'version' must be a whole number from 1, not {version!r}")
    return version


def env_flag(value: str) -> bool:
    """An on/off environment variable: 0, false, no and off are off; anything else is on."""
    return value.strip().lower() not in ("0", "false", "no", "off")


def normalize_ollama_host(value: str) -> str:
    """Accept OLLAMA_HOST the way the ollama tools do: 'host', 'host:port' or a full URL."""
    value = value.strip()
    has_scheme = "://" in value
    parsed = urlparse(value if has_scheme else f"http://{value}")
    host = parsed.hostname or "127.0.0.1"
    if host == "0.0.0.0":  # the server's bind-all address: the client talks to this machine
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    # A bare host gets Ollama's port; a full URL keeps its own (80/443 when it names none).
    port = parsed.port or (None if has_scheme else 11434)
    return f"{parsed.scheme}://{host}{f':{port}' if port else ''}{parsed.path.rstrip('/')}"
