"""The names of the relations methods and of EDR-MQ's retrievers, defaults first. Stdlib only, so
the CLI's parser offers them as choices without loading numpy or scipy."""

METHODS = ("edrmq", "tfidf", "cooc")
RETRIEVERS = ("hybrid", "dense", "bm25")
DEFAULT_RETRIEVER = "hybrid"  # beats the TF-IDF graph on newsgroups where dense alone lost (relations.md)
