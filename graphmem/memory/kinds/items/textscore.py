"""BM25 for the store items a query search finds that Lucene does not hold yet.

A new item's text reaches the tenant's item fulltext index when its vector is set,
after the put has answered (``item/write``, ``item/vectors_set``): its Lucene update
had doubled the put's commit. Until then the search scores the item itself, with the
analysis graphmem mirrors Lucene's English analyzer with (``enrich/lexical.py``) and
Lucene's BM25 parameters. Lucene's statistics are the tenant's whole index, which is not
at hand; the item is scored beside the search's own BM25 hits with the statistics of
those texts and its own, and set against the best hit under those same statistics, so
that it lands on the scale the hits are normalised to (the best hit 1).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from graphmem.enrich.lexical import stems, words
from graphmem.memory.search.scopescoring import BM25_B, BM25_K1

#: unindexed texts up to this many characters in all are scored on the event loop; more
#: in a thread (a search's worst case, 64 items of 20,000 characters, is ~90 ms)
INLINE_CHARS = 2_000


def bm25(terms: Sequence[str], texts: Sequence[str]) -> list[float]:
    """Each text's BM25 for the query's terms, with the statistics of ``texts``."""
    wanted = set(stems(words(" ".join(terms))))
    docs = [Counter(stems(words(text))) for text in texts]
    if not wanted or not docs:
        return [0.0] * len(docs)
    lengths = [sum(d.values()) for d in docs]
    average = (sum(lengths) / len(docs)) or 1.0
    idf = {
        t: math.log1p((len(docs) - df + 0.5) / (df + 0.5))
        for t in wanted
        for df in [sum(t in d for d in docs)]
    }
    scores = []
    for doc, length in zip(docs, lengths, strict=True):
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length / average)
        scores.append(sum(idf[t] * doc[t] / (doc[t] + norm) for t in wanted if doc[t]))
    return scores


def unindexed_scores(
    terms: Sequence[str], hits: Sequence[tuple[float, str]], unindexed: Sequence[str]
) -> list[float]:
    """The normalised BM25 (the best of Lucene's ``hits``, given as (score, text), is 1)
    of each text in ``unindexed``, capped at 1; against each other when Lucene found
    nothing."""
    if not unindexed:
        return []
    local = bm25(terms, [text for _, text in hits] + list(unindexed))
    own = local[len(hits) :]
    best = max(range(len(hits)), key=lambda i: hits[i][0], default=None)
    ref = local[best] if best is not None else 0.0
    if ref <= 0:
        ref = max(own)
    return [min(1.0, s / ref) if ref > 0 else 0.0 for s in own]
