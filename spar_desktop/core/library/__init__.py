"""The Metadata Index: files, metadata and a DAG of tags (SPAR §3.2). Never embeds anything."""
