"""How a query scores against a scope's view (``scopeview.py``): each memory's cosine to
the query by its own vector and by its best sentence, BM25 over the stem hashes with the
scope's own statistics, and the nearest memories by cosine. numpy over the view's
columns, a few milliseconds for a thousand memories.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from graphmem.memory.search.scopecolumns import F16, F32, I32, I64, U32, Mask

#: Lucene's BM25 parameters, so that a scope in memory ranks as its index would
BM25_K1 = 1.2
BM25_B = 0.75


class ScopeScoring:
    """The scoring half of ``ScopeView``: the columns it reads are the view's."""

    ids: npt.NDArray[np.bytes_]
    seqs: I64
    created: I64
    vectors: F32
    embedded: Mask
    sentences: F16
    counts: I64
    starts: I64
    terms: U32
    term_counts: I64
    term_rows: I32

    def cosines(self, query: F32) -> F32:
        """Each row's cosine to the (normalised) query, by its own vector."""
        # einsum, not @: above a thousand rows a BLAS matrix-vector product goes
        # multithreaded, which on a busy 2-core machine costs milliseconds, not microseconds
        own: F32 = np.einsum("ij,j->i", self.vectors, query)
        return own

    def best(self, rows: Sequence[int], own: F32, query: F32) -> F32:
        """The best cosine of each of ``rows``: the larger of its own and its best
        sentence's. Only for the rows a search returns or weighs (a few hundred), which
        is why sentence vectors can stay float16 here: half the memory of a view."""
        at = np.asarray(rows, dtype=np.int64)
        out: F32 = own[at].copy()
        counts = self.counts[at]
        has = counts > 0
        if has.any():
            c = counts[has]
            first = np.cumsum(c) - c  # each row's first sentence among those gathered
            gathered = np.repeat(self.starts[at[has]] - first, c) + np.arange(int(c.sum()))
            scores = np.einsum("ij,j->i", self.sentences[gathered].astype(np.float32), query)
            out[has] = np.maximum(out[has], np.maximum.reduceat(scores, first))
        return out

    def bm25(self, query: U32, mask: Mask, limit: int) -> tuple[I64, F32]:
        """The ``limit`` rows of ``mask`` with the best BM25 score for the query's stem
        hashes, best first, and their scores. The statistics (document frequencies,
        average length) are the whole view's, every tier, retracted memories too (as
        Lucene's index counts them, whatever the read's moment): what the scope holds,
        nothing outside it."""
        n = len(self.ids)
        documents = int(np.count_nonzero(self.term_counts))
        wanted = np.unique(query)
        if not documents or not len(wanted):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        # One pass over the scope's stems whatever the number of query terms (a query
        # of a few hundred distinct words costs what one of three does): the stems that
        # are query terms, counted per (term, row).
        hit = np.isin(self.terms, wanted)
        pairs, tf = np.unique(
            np.searchsorted(wanted, self.terms[hit]) * n + self.term_rows[hit],
            return_counts=True,
        )
        term, row = np.divmod(pairs, n)
        df = np.bincount(term, minlength=len(wanted))
        idf = np.log1p((documents - df + 0.5) / (df + 0.5))
        length = self.term_counts[row] * (documents / int(self.term_counts.sum()))
        norm = BM25_K1 * (1 - BM25_B + BM25_B * length)
        scores = np.bincount(row, weights=idf[term] * tf / (tf + norm), minlength=n).astype(
            np.float32
        )
        rows = np.flatnonzero(mask & (scores > 0))
        # best first; among equal scores, by date and then place in the conversation, as
        # memory/text_hits orders them: the same memories rank alike however they were
        # written (an import into another tenant ranks as the original does)
        order = np.lexsort((self.seqs[rows], self.created[rows], -scores[rows]))
        ordered: I64 = rows[order][:limit]
        return ordered, scores[ordered]

    def nearest(self, own: F32, mask: Mask, k: int) -> I64:
        """The ``k`` embedded rows of ``mask`` closest by their own vector, best first."""
        rows = np.flatnonzero(mask & self.embedded)
        if len(rows) > k:
            rows = rows[np.argpartition(-own[rows], k - 1)[:k]]
        ordered: I64 = rows[np.argsort(-own[rows], kind="stable")]
        return ordered
