import os
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from tests.support.servers import postgres_server


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


@pytest.fixture(scope="module")
def pg_url():
    try:
        with postgres_server() as url:
            yield url
    except RuntimeError as exc:
        if os.environ.get("CI"):
            raise  # .ci/run installs PostgreSQL: a missing server there is a failure, not a skip
        pytest.skip(str(exc))
