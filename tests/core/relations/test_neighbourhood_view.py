"""The relations tab's policy without a window (core/relations/neighbourhood_view.py): a file's
neighbourhood comes from the graph on screen when it holds the file, and nothing is built from
scratch when no relations are stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken
from spar_desktop.core.relations.neighbourhood_view import built_methods, load_neighbourhood
from spar_desktop.core.relations.tab_labels import RelationsNotBuilt

from .test_neighbourhood import chain_payload


@pytest.fixture
def library(tmp_path: Path):
    lib = Library.open(load_settings(tmp_path / "data", preferences=False, auto_tagging=False))
    yield lib
    lib.close()


def _quiet(_progress) -> None:
    pass


def test_the_graph_on_screen_answers_when_it_holds_the_file(library):
    shown = chain_payload()
    whole, around, where = load_neighbourhood(library, None, "tfidf", 102, 1, _quiet, CancelToken(), base=shown)
    assert whole is shown and where is None
    assert set(around.payload.file_ids) == {101, 102, 103}


def test_nothing_is_built_when_no_relations_are_stored(library):
    assert built_methods(library, None) == []
    with pytest.raises(RelationsNotBuilt, match="No relations have been built for the whole index yet: "
                                                "click Rebuild to compute the TF-IDF relations"):
        load_neighbourhood(library, None, "tfidf", 1, 1, _quiet, CancelToken())
