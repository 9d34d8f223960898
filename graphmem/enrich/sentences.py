"""Sentence-level embeddings: a memory is embedded sentence by sentence.

One vector for a whole turn blurs it when the turn says several things ("Congrats! We
went camping last week. The kids loved it."): a question about one of them matches that
sentence far better than the average of all three. So a memory with several sentences
keeps one vector per sentence; recall ranks it by its best sentence, and its own vector
(the one in the vector index, and the relevance of hot items) is the normalised
mean of its sentence vectors. A memory of one sentence is embedded as a whole, as before.

A model that ranks whole texts better (``Embedder.sentence_vectors`` false: e5-small)
embeds each memory whole, with no sentence vectors.

Chat-formatted content ("Caroline: Thanks! I went to the support group yesterday.")
carries its speaker label onto every sentence, because questions name who said what.
Measured on the LoCoMo dev split (BENCHMARKS.md): sentence vectors lift hybrid R@10.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from graphmem.enrich.embed import Embedder, Vectors

#: a sentence ends at . ! or ? followed by space and a capital, digit, quote or bracket
#: (so "3 p.m. tomorrow" stays one sentence)
_BOUNDARY = re.compile(r"""(?<=[.!?])\s+(?=[A-Z0-9"'(\[])""")
#: a leading "Name:" or "Role name:" label (short, no sentence punctuation)
_LABEL = re.compile(r"^([^\s:.!?][^:.!?\n]{0,38}):\s+")
#: fragments shorter than this ("Hi!", "Ok.") join the sentence after them
MIN_CHARS = 12
#: sentences beyond this many are joined into the last one (bounds the work per memory)
MAX_SENTENCES = 16


def speaker_label(text: str) -> str | None:
    """The "Name:" a chat-formatted memory starts with (at most three words), if any."""
    found = _LABEL.match(text.strip())
    return found.group(1) if found and len(found.group(1).split()) <= 3 else None


def speaker(text: str) -> str | None:
    """Who said a chat-formatted memory, as search compares it with a question's words
    (``retrieval.add_speaker``): its label lower-cased, spaces folded."""
    label = speaker_label(text)
    return " ".join(label.lower().split()) if label else None


def split_sentences(text: str) -> list[str]:
    """The sentences a memory is embedded by: one item for a single sentence (the text
    itself), otherwise each sentence with the text's speaker label, if it has one."""
    text = text.strip()
    label = speaker_label(text)
    # a label holds no colon: the first one ends it
    body = text.split(":", 1)[1].lstrip() if label else text
    parts: list[str] = []
    carry = ""
    for piece in _BOUNDARY.split(body):
        piece = (carry + " " + piece).strip() if carry else piece.strip()
        if len(piece) < MIN_CHARS:
            carry = piece
            continue
        carry = ""
        parts.append(piece)
    if carry:
        if parts:
            parts[-1] = f"{parts[-1]} {carry}"
        else:
            parts.append(carry)
    if len(parts) > MAX_SENTENCES:
        parts = [*parts[: MAX_SENTENCES - 1], " ".join(parts[MAX_SENTENCES - 1 :])]
    if len(parts) <= 1:
        return [text]
    return [f"{label}: {p}" if label else p for p in parts]


@dataclass(frozen=True)
class Embedded:
    """A memory's vector, and its sentence vectors when it has several sentences."""

    vector: list[float]
    sentences: Vectors | None


def embed_memories(embedder: Embedder, texts: Sequence[str]) -> list[Embedded]:
    """Every sentence of every text (every whole text, for a model that ranks them
    better, ``Embedder.sentence_vectors``) in one batched call, each with the model's
    ``document_prefix``."""
    if embedder.sentence_vectors:
        split = [split_sentences(t) for t in texts]
    else:
        split = [[t.strip()] for t in texts]
    flat = [embedder.document_prefix + s for parts in split for s in parts]
    vectors = embedder.embed(flat) if flat else np.zeros((0, embedder.dimension), np.float32)
    out: list[Embedded] = []
    start = 0
    for parts in split:
        block = vectors[start : start + len(parts)]
        start += len(parts)
        if len(parts) == 1:
            out.append(Embedded(block[0].tolist(), None))
            continue
        mean = block.mean(axis=0)
        mean /= max(float(np.linalg.norm(mean)), 1e-12)
        out.append(Embedded(mean.astype(np.float32).tolist(), block))
    return out


def pack(sentences: Vectors | None) -> bytes | None:
    """Sentence vectors as a graph property: float16 bytes (enough for cosine ranking)."""
    if sentences is None:
        return None
    return np.asarray(sentences, dtype=np.float16).tobytes()


def best_cosines(
    query: Sequence[float], packed: dict[str, bytes], dimension: int
) -> dict[str, float]:
    """Each memory's best sentence cosine against the (normalised) query vector. One
    product over every memory's sentences at once: a search weighs a few hundred memories,
    and a product each cost more in numpy's per-call overhead than in arithmetic. A value
    that is not whole float16 vectors is skipped (the memory keeps its own cosine)."""
    width = 2 * dimension
    kept = [(i, raw) for i, raw in packed.items() if raw and len(raw) % width == 0]
    if not kept:
        return {}
    rows = np.frombuffer(b"".join(raw for _, raw in kept), dtype=np.float16)
    # einsum, not @: BLAS would take a larger product multithreaded (scopeview.cosines)
    matrix = rows.reshape(-1, dimension).astype(np.float32)
    scores = np.einsum("ij,j->i", matrix, np.asarray(query, np.float32))
    starts = np.cumsum([0] + [len(raw) // width for _, raw in kept[:-1]])
    best = np.maximum.reduceat(scores, starts)
    return {i: float(b) for (i, _), b in zip(kept, best.tolist(), strict=True)}
