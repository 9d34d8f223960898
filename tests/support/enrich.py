"""Deterministic stand-ins for the embedder and the token counter, fast and without model
files: texts that share words get close vectors, and a text's tokens are its words."""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from graphmem.enrich import lexical
from graphmem.enrich.embed import Vectors
from graphmem.enrich.tokens import TokenCounter


class HashEmbedder:
    """Each stem of a text (``enrich/lexical.py``) adds ±1 to one dimension chosen by its
    hash; the sum is L2-normalised. Two texts' cosine is then the overlap of their stems
    (exactly 1 for the same stems), which is enough to make a ranking predictable. A text
    without a stem gets the same fixed vector as every other such text."""

    query_prefix = ""
    document_prefix = ""
    sentence_vectors = True

    def __init__(self, dimension: int = 256, name: str = "hash-test-embedder") -> None:
        self.dimension = dimension
        self.name = name
        #: every text embedded, in order (tests count what was embedded)
        self.embedded: list[str] = []

    def vector(self, text: str) -> list[float]:
        (row,) = self.embed([text])
        vector: list[float] = row.tolist()
        return vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.embedded += texts
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for stem in lexical.stems(lexical.words(text)):
                h = zlib.crc32(stem.encode("utf-8"))
                out[row, h % self.dimension] += 1.0 if (h >> 16) & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm == 0.0:
                out[row, 0], norm = 1.0, 1.0
            out[row] /= norm
        return out


class TableEmbedder:
    """Vectors a test chooses: each text's from ``table`` (normalised), any other text's
    the last basis vector, so a ranking can separate what words match from what the
    vectors say."""

    query_prefix = ""
    document_prefix = ""
    sentence_vectors = True

    def __init__(self, table: Mapping[str, Sequence[float]], name: str = "table-embedder") -> None:
        self.table = table
        self.dimension = len(next(iter(table.values())))
        self.name = name

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            if text in self.table:
                out[row] = self.table[text]
            else:
                out[row, -1] = 1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-12)
        return out


class WordCounter(TokenCounter):
    """A text's tokens are its whitespace-separated words (at least one), so a test can
    size a session's budget by counting words."""

    def __init__(self) -> None:
        # no tokenizer: nothing of the parent's is used
        pass

    def count(self, text: str) -> int:
        return max(1, len(text.split()))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    async def count_on_loop(self, texts: Sequence[str]) -> list[int]:
        return self.count_many(texts)
