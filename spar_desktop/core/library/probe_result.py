"""What probing one file found: a plain value shared by probe and doc_metadata (which fills its
office and mail fields), so neither needs the other for its type."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from spar_desktop.core.library.models import FileStatus


@dataclass
class ProbeResult:
    size: int
    mtime_ns: int
    format: str
    content_hash: Optional[str]
    status: str = FileStatus.OK
    error: Optional[str] = None
    title: Optional[str] = None
    author: Optional[str] = None
    created_at: Optional[datetime] = None
    page_count: Optional[int] = None
    extra: dict = field(default_factory=dict)
