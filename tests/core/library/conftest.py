from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner


@pytest.fixture
def library(tmp_path: Path) -> Library:
    lib = Library.open(load_settings(tmp_path / "data"))
    yield lib
    lib.close()


@pytest.fixture
def scanner(library: Library) -> Scanner:
    return Scanner(library, batch_size=50)


@pytest.fixture
def share(tmp_path: Path) -> Path:
    root = tmp_path / "share"
    root.mkdir()
    return root
