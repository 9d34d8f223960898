"""bge-small-en-v1.5 as `graphmem services install` unpacks it from its Maven jar (the
setup ran that before these tests): the real model's vectors, its query instruction,
and its batching."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphmem.enrich.bge import BgeSmallEmbedder
from graphmem.enrich.embed import embed_queries
from graphmem.enrich.embedders import make_embedder
from graphmem.settings import load_settings

DOCUMENTS = [
    "Caroline went to an LGBTQ support group on Tuesday and found it powerful.",
    "Melanie painted a sunrise over the lake last summer.",
    "The quarterly report is due on Friday; send your numbers to finance.",
    "ok",
]
QUESTION = "When did Caroline go to the support group?"


@pytest.fixture(scope="module")
def bge() -> BgeSmallEmbedder:
    embedder = make_embedder("bge-small-int8", 1, models_dir=load_settings().models_dir)
    assert isinstance(embedder, BgeSmallEmbedder)
    return embedder


def test_vectors_are_unit_length_and_the_question_finds_its_answer(bge: BgeSmallEmbedder) -> None:
    documents = bge.embed(DOCUMENTS)
    (query,) = embed_queries(bge, [QUESTION])
    assert documents.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(documents, axis=1), 1.0, atol=1e-5)
    scores = documents @ query
    assert int(np.argmax(scores)) == 0
    assert scores[0] - max(scores[1:]) > 0.2


def test_the_query_instruction_is_what_bge_was_trained_with(bge: BgeSmallEmbedder) -> None:
    documents = bge.embed(DOCUMENTS)
    (instructed,) = embed_queries(bge, [QUESTION])
    (plain,) = bge.embed([QUESTION])
    assert bge.query_prefix.startswith("Represent this sentence")
    # the instruction moves the query's vector (what the model card asks of queries)
    assert float(instructed @ plain) < 0.99
    assert float(documents[0] @ instructed) > float(documents[1] @ instructed)


def test_a_texts_vector_does_not_depend_on_its_batch(bge: BgeSmallEmbedder) -> None:
    long = " ".join(["Caroline talked about her adoption plans at length."] * 60)  # > 512 tokens
    together = bge.embed([*DOCUMENTS, long])
    alone = np.vstack([bge.embed([t]) for t in [*DOCUMENTS, long]])
    np.testing.assert_allclose(together, alone, atol=2e-5)


def test_the_models_folder_is_where_the_settings_say(tmp_path: Path) -> None:
    assert load_settings(models_dir=tmp_path).models_dir == tmp_path
