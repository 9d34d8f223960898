"""One search scope's memories in memory, as arrays: what lets a search rank a user's
thousand memories by cosine, find each one's best sentence and walk to its neighbouring
turns in well under a millisecond, instead of three Cypher round trips.

A view holds only what does not change without a version bump (``changes.py``): ids,
session, user, place in the conversation, type, tier and vectors. What a search returns
(content, access counts, relevance) is read fresh from the graph for the final results.
Views are immutable; a change makes a new view (``patched``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..models import MemoryType, Tier
from ..stores.models import MemoryRows

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]

TIER_CODES = {t.value: n for n, t in enumerate(Tier)}
TYPE_CODES = {t.value: n for n, t in enumerate(MemoryType)}
UNKNOWN = -1  # a type or tier written by something newer than this process


@dataclass(frozen=True, slots=True)
class Turn:
    """A memory as ranking sees it (``retrieval.Turn``)."""

    id: str
    session_id: str
    user_id: str | None
    seq: int
    type: str


def decode(rows: MemoryRows, dimension: int) -> tuple[F32, Mask, F32, I64]:
    """Rows' vectors as arrays: (own vectors, embedded?, sentence vectors, sentences per
    memory). A memory not embedded yet has a zero vector and no sentences."""
    n = len(rows.ids)
    vectors = np.zeros((n, dimension), dtype=np.float32)
    embedded = np.zeros(n, dtype=np.bool_)
    for i, raw in enumerate(rows.vectors):
        if raw is not None and len(raw) == 4 * dimension:
            vectors[i] = np.frombuffer(raw, dtype="<f4")
            embedded[i] = True
    counts = np.zeros(n, dtype=np.int64)
    blocks = []
    for i, raw in enumerate(rows.sentences):
        if raw is not None and embedded[i] and len(raw) % (2 * dimension) == 0:
            block = np.frombuffer(raw, dtype="<f2").reshape(-1, dimension)
            counts[i] = len(block)
            blocks.append(block)
    sentences = (
        np.concatenate(blocks).astype(np.float32)
        if blocks
        else np.zeros((0, dimension), dtype=np.float32)
    )
    return vectors, embedded, sentences, counts


class ScopeView:
    def __init__(
        self,
        ids: list[str],
        sessions: list[str],
        users: list[str | None],
        seqs: I64,
        tiers: npt.NDArray[np.int8],
        types: npt.NDArray[np.int8],
        type_names: list[str],
        vectors: F32,
        embedded: Mask,
        sentences: F32,
        counts: I64,
    ) -> None:
        self.ids, self.sessions, self.users = ids, sessions, users
        self.seqs, self.tiers, self.types, self.type_names = seqs, tiers, types, type_names
        self.vectors, self.embedded = vectors, embedded
        self.sentences, self.counts = sentences, counts
        self.index = {item_id: i for i, item_id in enumerate(ids)}
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        # Each session's rows in conversation order, and each row's place in that order.
        self.order: dict[str, I64] = {}
        self.place = np.zeros(len(ids), dtype=np.int64)
        by_session: dict[str, list[int]] = {}
        for i, session in enumerate(sessions):
            by_session.setdefault(session, []).append(i)
        for session, rows in by_session.items():
            ordered = np.asarray(sorted(rows, key=lambda r: (seqs[r], ids[r])), dtype=np.int64)
            self.order[session] = ordered
            self.place[ordered] = np.arange(len(ordered))
        self.nbytes = (
            vectors.nbytes + sentences.nbytes + 48 * len(ids) + sum(len(i) for i in ids) * 3
        )

    @classmethod
    def from_rows(cls, rows: MemoryRows, dimension: int) -> ScopeView:
        vectors, embedded, sentences, counts = decode(rows, dimension)
        return cls(
            list(rows.ids),
            list(rows.sessions),
            list(rows.users),
            np.asarray(rows.seqs, dtype=np.int64),
            np.asarray([TIER_CODES.get(t, UNKNOWN) for t in rows.tiers], dtype=np.int8),
            np.asarray([TYPE_CODES.get(t, UNKNOWN) for t in rows.types], dtype=np.int8),
            list(rows.types),
            vectors,
            embedded,
            sentences,
            counts,
        )

    def __len__(self) -> int:
        return len(self.ids)

    def patched(self, changed: Collection[str], rows: MemoryRows) -> ScopeView:
        """This view with the memories of ``changed`` replaced by ``rows`` (the ones of
        them still in the scope; the others were deleted or left it)."""
        keep = np.asarray(
            [i for i, item_id in enumerate(self.ids) if item_id not in changed], dtype=np.int64
        )
        fresh = ScopeView.from_rows(rows, self.vectors.shape[1])
        # the kept memories' sentence rows, in order
        spans = [np.arange(self.starts[i], self.starts[i] + self.counts[i]) for i in keep]
        kept_sentences = self.sentences[np.concatenate(spans)] if spans else self.sentences[:0]
        return ScopeView(
            [self.ids[i] for i in keep] + fresh.ids,
            [self.sessions[i] for i in keep] + fresh.sessions,
            [self.users[i] for i in keep] + fresh.users,
            np.concatenate((self.seqs[keep], fresh.seqs)),
            np.concatenate((self.tiers[keep], fresh.tiers)),
            np.concatenate((self.types[keep], fresh.types)),
            [self.type_names[i] for i in keep] + fresh.type_names,
            np.concatenate((self.vectors[keep], fresh.vectors)),
            np.concatenate((self.embedded[keep], fresh.embedded)),
            np.concatenate((kept_sentences, fresh.sentences)),
            np.concatenate((self.counts[keep], fresh.counts)),
        )

    # --- what a search asks ---------------------------------------------------------
    def mask(
        self,
        tiers: Sequence[str],
        types: Sequence[MemoryType] | None = None,
        user_id: str | None = None,
    ) -> Mask:
        """The rows a search may return: of its tiers (and types, and user)."""
        keep = np.isin(self.tiers, [TIER_CODES[t] for t in tiers if t in TIER_CODES])
        if types:
            keep &= np.isin(self.types, [TYPE_CODES[t.value] for t in types])
        if user_id is not None:
            keep &= np.asarray([u == user_id for u in self.users], dtype=np.bool_)
        return keep

    def cosines(self, query: F32) -> tuple[F32, F32]:
        """Each row's cosine to the (normalised) query, and its best cosine: the larger
        of that and its best sentence's."""
        # einsum, not @: above a thousand rows a BLAS matrix-vector product goes
        # multithreaded, which on a busy 2-core machine costs milliseconds, not microseconds
        own: F32 = np.einsum("ij,j->i", self.vectors, query)
        best = own.copy()
        if len(self.sentences):
            scores = np.einsum("ij,j->i", self.sentences, query)
            has = self.counts > 0
            best[has] = np.maximum(own[has], np.maximum.reduceat(scores, self.starts[has]))
        return own, best

    def nearest(self, own: F32, mask: Mask, k: int) -> I64:
        """The ``k`` embedded rows of ``mask`` closest by their own vector, best first."""
        rows = np.flatnonzero(mask & self.embedded)
        if len(rows) > k:
            rows = rows[np.argpartition(-own[rows], k - 1)[:k]]
        ordered: I64 = rows[np.argsort(-own[rows], kind="stable")]
        return ordered

    def neighbours(self, row: int, window: int, mask: Mask) -> list[int]:
        """The ``window`` rows of ``mask`` just before and just after ``row`` in its
        session's conversation."""
        order = self.order[self.sessions[row]]
        at = int(self.place[row])
        out: list[int] = []
        for step in (-1, 1):
            found, n = 0, at + step
            while found < window and 0 <= n < len(order):
                other = int(order[n])
                if mask[other]:
                    out.append(other)
                    found += 1
                n += step
        return out

    def turn(self, row: int) -> Turn:
        return Turn(
            self.ids[row],
            self.sessions[row],
            self.users[row],
            int(self.seqs[row]),
            self.type_names[row],
        )
