"""Sentence splitting and sentence vectors (enrich/sentences.py)."""

from __future__ import annotations

import numpy as np

from graphmem.enrich.sentences import (
    MAX_SENTENCES,
    best_cosines,
    embed_memories,
    pack,
    speaker,
    split_sentences,
)


def test_one_sentence_is_the_text_itself() -> None:
    assert split_sentences("  Just one sentence here.  ") == ["Just one sentence here."]
    assert split_sentences("The meeting is at 3 p.m. tomorrow.") == [
        "The meeting is at 3 p.m. tomorrow."
    ]


def test_sentences_keep_the_speaker_label() -> None:
    text = "Caroline: Thanks! I went to the support group yesterday. It was so powerful."
    assert split_sentences(text) == [
        "Caroline: Thanks! I went to the support group yesterday.",
        "Caroline: It was so powerful.",
    ]
    # a colon deep in a sentence is not a label
    assert split_sentences("We met at the station at noon: great. Then we left for home.") == [
        "We met at the station at noon: great.",
        "Then we left for home.",
    ]


def test_short_fragments_join_and_long_texts_are_bounded() -> None:
    assert split_sentences("Ok. Sure. We go to Paris on Monday morning.") == [
        "Ok. Sure. We go to Paris on Monday morning."
    ]
    many = " ".join(f"Sentence number {n} is here." for n in range(40))
    parts = split_sentences(many)
    assert len(parts) == MAX_SENTENCES
    assert "".join(parts).replace(" ", "") == many.replace(" ", "")


class BagOfWords:
    """A deterministic stand-in embedder (pure logic): hashed word counts."""

    name = "bag-of-words"
    dimension = 64
    query_prefix = ""
    document_prefix = ""
    sentence_vectors = True

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(".", " ").replace(":", " ").split():
                out[row, sum(map(ord, word)) % self.dimension] += 1.0
        return out / np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)


def test_a_memory_ranks_by_its_best_sentence() -> None:
    embedder = BagOfWords()
    single, double = embed_memories(
        embedder, ["zebra stripes", "Alpha beta gamma delta. Zebra stripes everywhere today."]
    )
    assert single.sentences is None
    assert double.sentences is not None and double.sentences.shape == (2, 64)
    assert np.isclose(np.linalg.norm(double.vector), 1.0, atol=1e-5)
    query = embedder.embed(["zebra stripes"])[0]
    packed = pack(double.sentences)
    assert packed is not None
    best = best_cosines(query.tolist(), {"m": packed}, embedder.dimension)["m"]
    whole = float(np.dot(query, double.vector))
    assert best > whole + 0.05  # the matching sentence beats the blurred mean
    assert np.isclose(best, float(np.dot(query, double.sentences[1])), atol=1e-2)


def test_best_cosines_of_many_memories_at_once_match_one_by_one() -> None:
    rng = np.random.default_rng(7)
    dimension = 8
    query = rng.normal(size=dimension).astype(np.float32)
    query /= np.linalg.norm(query)
    packed: dict[str, bytes] = {}
    expected: dict[str, float] = {}
    for n in range(40):
        count = int(rng.integers(1, 6))
        sentences = rng.normal(size=(count, dimension)).astype(np.float32)
        raw = pack(sentences)
        assert raw is not None
        packed[f"m{n}"] = raw
        halves = np.frombuffer(raw, dtype=np.float16).reshape(-1, dimension).astype(np.float32)
        expected[f"m{n}"] = float((halves @ query).max())
    packed["torn"] = packed["m0"][:-3]  # not whole float16 vectors: skipped
    packed["empty"] = b""
    best = best_cosines(query.tolist(), packed, dimension)
    assert set(best) == set(expected)
    for key, value in expected.items():
        assert abs(best[key] - value) < 1e-6, key
    assert best_cosines(query.tolist(), {}, dimension) == {}


def test_a_chat_formatted_memory_names_its_speaker() -> None:
    assert speaker("Melanie: We went camping. The kids loved it.") == "melanie"
    assert speaker("  Jon   Doe: hi there") == "jon doe"
    assert speaker("Dr Anna Maria Lee: four words are not a label") is None
    assert speaker("The meeting is at 3 p.m.: bring notes") is None
    assert speaker("plain text") is None


class Recorder(BagOfWords):
    """BagOfWords that keeps what it was asked to embed, for a model that embeds whole
    texts behind a document instruction (e5-small)."""

    document_prefix = "passage: "
    sentence_vectors = False

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return super().embed(texts)


def test_a_whole_text_model_gets_each_memory_once_behind_its_instruction() -> None:
    embedder = Recorder()
    text = "Caroline: Alpha beta gamma delta. Zebra stripes everywhere today."
    (embedded,) = embed_memories(embedder, [f"  {text} "])
    assert embedder.seen == [f"passage: {text}"]
    assert embedded.sentences is None
    np.testing.assert_allclose(embedded.vector, BagOfWords().embed([f"passage: {text}"])[0])
