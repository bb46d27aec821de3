"""No import cycle among core/workspaces and core/retrieval, TYPE_CHECKING imports included
(grimp counts them): the builder and search never reach back into the manager, ranking never
into selection (issue 33)."""

from __future__ import annotations

import itertools

import grimp

PACKAGES = ("spar_desktop.core.workspaces", "spar_desktop.core.retrieval")


def test_no_module_of_workspaces_or_retrieval_imports_back_what_imports_it():
    graph = grimp.build_graph("spar_desktop", include_external_packages=False)
    modules = sorted(m for m in graph.modules if m.startswith(PACKAGES))
    assert "spar_desktop.core.workspaces.manager" in modules and "spar_desktop.core.retrieval.searcher" in modules
    cycles = [(a, b, graph.find_shortest_chain(a, b), graph.find_shortest_chain(b, a))
              for a, b in itertools.combinations(modules, 2)
              if graph.chain_exists(a, b) and graph.chain_exists(b, a)]
    assert cycles == []


def test_builder_and_search_never_import_the_manager():
    graph = grimp.build_graph("spar_desktop", include_external_packages=False)
    manager = "spar_desktop.core.workspaces.manager"
    for low in ("builder", "search", "lookup", "searchers"):
        assert not graph.chain_exists(f"spar_desktop.core.workspaces.{low}", manager), low
    assert graph.chain_exists(manager, "spar_desktop.core.workspaces.builder")  # the graph sees the real imports
