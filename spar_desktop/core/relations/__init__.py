"""Document relations: EDR-MQ (query-marginalised two-stage retrieval), co-occurrence clusters,
a TF-IDF top-25 baseline, session metrics, and the graph (communities, ForceAtlas2, GEXF/GraphML).

Modules are small and import their heavy dependencies (scikit-learn, gensim, networkx) lazily,
so importing this package costs nothing. The modules import each other at module level, without
cycles (an import-linter contract); an import inside a function defers a heavy library and says
which. Nothing here imports Qt: the graph view consumes the
immutable ``GraphPayload`` built by ``payload.py``.

- querylog.py: the query log as query sets and sessions
- doc_vectors.py: one vector, title and text per document (from the embedding cache or BEIR)
- synthetic.py: synthetic queries (titles, salient sentences, an optional question hook)
- questions.py: that hook backed by a local Ollama server (None when it is not reachable)
- topk.py: row-wise top-k and softmax, shared by EDR-MQ, neighbour lists, walks and ranking
- edrmq.py: the relation matrix R (batched matrix products, incremental accumulation)
- neighbors.py: exact candidate-pruned second stage (precomputed neighbour lists + a bound)
- tfidf.py: the TF-IDF top-25 similarity baseline
- cooc.py / clusters.py / expansion.py: co-occurrence sequences, Word2Vec + clustering, retrieval
- session_metrics.py: session coverage@k and calls-to-τ with bootstrap CIs
- graph.py / layout.py / payload.py: networkx graph, ForceAtlas2, the UI payload
- scope.py / persist.py: which files, persistence under <data dir>/relations/
- errors.py: RelationsError, the user-facing problem every module raises
- build_delta.py / build.py / update_stored.py: what changed since a build, building (full or
  incremental), and bringing a stored build up to date
- estimate.py / eta.py / checkpoint.py: a build's cost before it starts, the time left while it
  runs, and its query phase kept so a cancelled build resumes
- stored_lookup.py: reading a stored build (relations, a file by reference, the networkx graph)
- service.py: the library-facing API (build, related files, graph, export, payload); re-exports
  what the app and the CLI use from build.py and stored_lookup.py
- neighbourhood.py / expanded_search.py: a file's neighbourhood, cluster-expanded search
- evaluation.py / beir_sessions.py: precision against known relations, session metrics on BEIR
"""
