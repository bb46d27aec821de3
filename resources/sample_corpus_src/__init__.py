"""Content and writers for SPAR Desktop's bundled sample corpus (fictional Northwind Renewables Ltd).

Everything here is invented. ``resources/make_sample_corpus.py`` turns this data into files.
"""
