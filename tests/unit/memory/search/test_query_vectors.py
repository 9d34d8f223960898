"""Query embeddings are cached per tenant (memory/search/ranking.py, ``QueryVectors``): a repeated
question is not embedded again, and one tenant's cache never answers another's, so a
search's speed tells no tenant what another asked."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from graphmem.memory.search.ranking import QueryVectors

pytestmark = pytest.mark.asyncio


class CountingEmbedder:
    dimension = 4
    query_prefix = ""
    document_prefix = ""
    sentence_vectors = True

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += texts
        return np.ones((len(texts), self.dimension), dtype=np.float32)


async def test_a_repeated_question_is_embedded_once_per_tenant() -> None:
    embedder = CountingEmbedder()
    vectors = QueryVectors(embedder)  # type: ignore[arg-type]
    assert await vectors("a", "where is the dentist") == [1.0] * 4
    await vectors("a", "where is the dentist")
    assert embedder.texts == ["where is the dentist"]
    await vectors("b", "where is the dentist")  # another tenant: not from a's cache
    assert embedder.texts == ["where is the dentist"] * 2


async def test_the_cache_keeps_only_the_most_recent() -> None:
    embedder = CountingEmbedder()
    vectors = QueryVectors(embedder, size=2)  # type: ignore[arg-type]
    for text in ("one", "two", "one", "three"):  # "one" used again: "two" is the oldest
        await vectors("t", text)
    await vectors("t", "one")
    await vectors("t", "two")
    assert embedder.texts == ["one", "two", "three", "two"]
