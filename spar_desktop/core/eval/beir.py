"""Reading BEIR-format test collections: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.

Problems with the files are reported, not guessed around: a missing file or an unparsable line is
a BeirError naming the file and line; qrels that point at documents or queries the collection
does not contain are skipped and counted, because public BEIR copies often ship partial corpora.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional


class BeirError(ValueError):
    """The folder is not a readable BEIR collection; the message says which file and why."""


@dataclass(frozen=True)
class BeirDoc:
    doc_id: str
    title: str
    text: str

    @property
    def full_text(self) -> str:
        """What gets indexed: the title (when there is one), a blank line, then the text."""
        return f"{self.title}\n\n{self.text}" if self.title else self.text


@dataclass
class BeirDataset:
    name: str
    split: str
    corpus: dict[str, BeirDoc]
    queries: dict[str, str]  # only the queries judged in this split's qrels
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> graded relevance
    warnings: list[str] = field(default_factory=list)
    skipped_unknown_docs: int = 0
    skipped_unknown_queries: int = 0

    def limit_queries(self, n: Optional[int]) -> "BeirDataset":
        """The first ``n`` judged queries (in qrels file order), for quick runs."""
        if n is None or n >= len(self.queries):
            return self
        keep = list(self.queries)[:n]
        return BeirDataset(self.name, self.split, self.corpus, {q: self.queries[q] for q in keep},
                           {q: self.qrels[q] for q in keep}, self.warnings,
                           self.skipped_unknown_docs, self.skipped_unknown_queries)


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise BeirError(f"{path.name} is missing from {path.parent}")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BeirError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or "_id" not in row:
                raise BeirError(f"{path}:{lineno}: a record needs an '_id' field")
            rows.append(row)
    return rows


def available_splits(folder: str | Path) -> list[str]:
    qdir = Path(folder) / "qrels"
    return sorted(p.stem for p in qdir.glob("*.tsv")) if qdir.is_dir() else []


def load_beir(folder: str | Path, split: str = "test") -> BeirDataset:
    root = Path(folder)
    if not root.is_dir():
        raise BeirError(f"{root} is not a folder")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        splits = available_splits(root)
        hint = f"; available splits: {', '.join(splits)}" if splits else ""
        raise BeirError(f"no qrels for split '{split}' ({qrels_path} is missing){hint}")

    corpus: dict[str, BeirDoc] = {}
    for row in _read_jsonl(root / "corpus.jsonl"):
        doc_id = str(row["_id"])
        corpus[doc_id] = BeirDoc(doc_id, str(row.get("title") or ""), str(row.get("text") or ""))
    all_queries = {str(r["_id"]): str(r.get("text") or "") for r in _read_jsonl(root / "queries.jsonl")}

    qrels: dict[str, dict[str, int]] = {}
    warnings: list[str] = []
    unknown_docs = unknown_queries = 0
    with qrels_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\r\n").split("\t")
            if not line.strip():
                continue
            if lineno == 1 and not _is_int(parts[-1]):
                continue  # the header row ("query-id corpus-id score")
            if len(parts) == 4:  # TREC style: qid, iteration, docid, rel
                parts = [parts[0], parts[2], parts[3]]
            if len(parts) != 3 or not _is_int(parts[2]):
                raise BeirError(f"{qrels_path}:{lineno}: expected 'query-id<TAB>corpus-id<TAB>score'")
            qid, did, rel = parts[0].strip(), parts[1].strip(), int(parts[2])
            if qid not in all_queries:
                unknown_queries += 1
                continue
            if did not in corpus:
                unknown_docs += 1
                continue
            qrels.setdefault(qid, {})[did] = rel
    if unknown_queries:
        warnings.append(f"{unknown_queries} qrels lines name queries missing from queries.jsonl (skipped)")
    if unknown_docs:
        warnings.append(f"{unknown_docs} qrels lines name documents missing from corpus.jsonl (skipped)")
    # A query only counts when it has at least one relevant document left after skipping.
    qrels = {q: d for q, d in qrels.items() if any(r > 0 for r in d.values())}
    queries = {q: all_queries[q] for q in qrels}
    if not queries:
        raise BeirError(f"{qrels_path} judges no query that exists with a relevant document in the corpus")
    return BeirDataset(root.name, split, corpus, queries, qrels, warnings, unknown_docs, unknown_queries)


def _is_int(value: str) -> bool:
    try:
        int(value)
        return True
    except ValueError:
        return False
