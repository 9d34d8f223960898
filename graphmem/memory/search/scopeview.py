"""One search scope's memories in memory, as arrays: what lets a search rank a user's
thousand memories by BM25 (with the scope's own statistics) and by cosine, find each
one's best sentence and walk to its neighbouring turns in about a millisecond, instead
of four Cypher round trips.

A view holds only what does not change without a version bump (``changes.py``): ids,
session, user, place in the conversation, date, speaker, type, tier, vectors, stem
hashes and the two clocks (retracted memories stay, masked out of a current read, so
that a read at a moment is served here too: ``scopeclocks.py``).
What a search returns (content, access counts, relevance) is read fresh from the graph
for the final results. Views are immutable; a change makes a new view (``patched``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from graphmem.domain.models import MemoryType
from graphmem.domain.moments import NOW, Moment
from graphmem.memory.search.scopeclocks import Clocks
from graphmem.memory.search.scopecolumns import (
    F16,
    F32,
    I32,
    I64,
    TIER_CODES,
    TYPE_CODES,
    U32,
    UNKNOWN,
    Codes,
    Mask,
    decode,
    decode_terms,
    packed_ids,
)
from graphmem.memory.search.scopescoring import ScopeScoring
from graphmem.stores.models import MemoryRows


@dataclass(frozen=True, slots=True)
class Turn:
    """A memory as ranking sees it (``fusion.Turn``)."""

    id: str
    session_id: str
    user_id: str | None
    seq: int
    type: str
    #: when it happened, epoch seconds (0: not known)
    created: int = 0
    #: who said it ("": not known)
    speaker: str = ""


class ScopeView(ScopeScoring):
    """Columns only, no Python object per row: a view is its arrays and a few objects,
    sized exactly (``nbytes``, what the cache's bound counts), and building, patching and
    looking up are numpy operations over them."""

    def __init__(
        self,
        ids: npt.NDArray[np.bytes_],
        sessions: Codes,
        users: Codes,
        seqs: I64,
        tiers: npt.NDArray[np.int8],
        types: npt.NDArray[np.int8],
        type_names: Codes,
        vectors: F32,
        embedded: Mask,
        sentences: F16,
        counts: I64,
        terms: U32,
        term_counts: I64,
        analysed: Mask,
        created: I64,
        speakers: Codes,
        clocks: Clocks,
    ) -> None:
        self.ids, self.sessions, self.users = ids, sessions, users
        self.seqs, self.tiers, self.types, self.type_names = seqs, tiers, types, type_names
        self.vectors, self.embedded = vectors, embedded
        self.sentences, self.counts = sentences, counts
        #: every row's stem hashes, and the row each belongs to; ``lexical``: every row
        #: has them, so BM25 can be computed here with the scope's own statistics
        self.terms, self.term_counts, self.analysed = terms, term_counts, analysed
        self.lexical = bool(analysed.all())
        self.created, self.speakers = created, speakers
        #: record time, valid time and retractions: which rows a moment sees (``seen``)
        self.clocks = clocks
        self.term_rows: I32 = np.repeat(np.arange(len(ids), dtype=np.int32), term_counts)
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        # ids sorted, for lookups by binary search
        self.by_id: I64 = np.argsort(ids, kind="stable")
        self.sorted_ids = ids[self.by_id]
        # all rows grouped by session, each session in conversation order, and each
        # row's place in that order
        self.order: I64 = np.lexsort((ids, seqs, sessions.codes))
        self.ordered_sessions = sessions.codes[self.order]
        self.place = np.zeros(len(ids), dtype=np.int64)
        self.place[self.order] = np.arange(len(ids))
        self.nbytes = (
            sum(a.nbytes for a in (ids, seqs, tiers, types, vectors, embedded, sentences))
            + counts.nbytes * 2
            + terms.nbytes * 2
            + term_counts.nbytes
            + analysed.nbytes
            + created.nbytes
            + self.by_id.nbytes * 4
            + sessions.nbytes
            + users.nbytes
            + type_names.nbytes
            + speakers.nbytes
            + clocks.nbytes
        )

    @classmethod
    def from_rows(cls, rows: MemoryRows, dimension: int) -> ScopeView:
        pages = Pages(dimension)
        pages.add(rows)
        return pages.view()

    def __len__(self) -> int:
        return len(self.ids)

    def id_at(self, row: int) -> str:
        return bytes(self.ids[row]).decode()

    def rows_of(self, ids: Sequence[str]) -> list[int | None]:
        """Each id's row, None for an id the view does not hold."""
        if not len(self.ids) or not ids:
            return [None] * len(ids)
        wanted = packed_ids(ids)
        at = np.minimum(np.searchsorted(self.sorted_ids, wanted), len(self.ids) - 1)
        found = self.sorted_ids[at] == wanted
        rows = self.by_id[at]
        return [int(r) if f else None for r, f in zip(rows, found, strict=True)]

    def patched(self, changed: Collection[str], rows: MemoryRows) -> ScopeView:
        """This view with the memories of ``changed`` replaced by ``rows`` (the ones of
        them still in the scope; the others were deleted or left it)."""
        gone = np.zeros(len(self.ids), dtype=np.bool_)
        for row in self.rows_of(list(changed)):
            if row is not None:
                gone[row] = True
        keep = np.flatnonzero(~gone)
        vectors, embedded, sentences, counts = decode(rows, self.vectors.shape[1])
        # the kept memories' sentence rows and stems, in order
        in_kept = np.repeat(~gone, self.counts)
        terms, term_counts, analysed = decode_terms(rows)
        return ScopeView(
            np.concatenate((self.ids[keep], packed_ids(rows.ids))),
            self.sessions.merged(keep, rows.sessions),
            self.users.merged(keep, rows.users),
            np.concatenate((self.seqs[keep], np.asarray(rows.seqs, dtype=np.int64))),
            np.concatenate(
                (
                    self.tiers[keep],
                    np.asarray([TIER_CODES.get(t, UNKNOWN) for t in rows.tiers], dtype=np.int8),
                )
            ),
            np.concatenate(
                (
                    self.types[keep],
                    np.asarray([TYPE_CODES.get(t, UNKNOWN) for t in rows.types], dtype=np.int8),
                )
            ),
            self.type_names.merged(keep, rows.types),
            np.concatenate((self.vectors[keep], vectors)),
            np.concatenate((self.embedded[keep], embedded)),
            np.concatenate((self.sentences[in_kept], sentences)),
            np.concatenate((self.counts[keep], counts)),
            np.concatenate((self.terms[np.repeat(~gone, self.term_counts)], terms)),
            np.concatenate((self.term_counts[keep], term_counts)),
            np.concatenate((self.analysed[keep], analysed)),
            np.concatenate((self.created[keep], np.asarray(rows.dates(), dtype=np.int64))),
            self.speakers.merged(keep, rows.said_by()),
            Clocks.joined([self.clocks.kept(keep, len(self.ids)), Clocks.of(rows)]),
        )

    # --- what a search asks ---------------------------------------------------------
    def mask(
        self,
        tiers: Sequence[str],
        types: Sequence[MemoryType] | None = None,
        user_id: str | None = None,
        moment: Moment = NOW,
    ) -> Mask:
        """The rows a search may return: of its tiers (and types, and user), seen at
        its moment (now: the retracted left out)."""
        keep = np.isin(self.tiers, [TIER_CODES[t] for t in tiers if t in TIER_CODES])
        if types:
            keep &= np.isin(self.types, [TYPE_CODES[t.value] for t in types])
        if user_id is not None:
            keep &= self.users.rows_of(user_id)
        seen = self.clocks.seen(moment)
        if seen is not None:
            keep &= seen
        return keep

    def neighbours(self, row: int, window: int, mask: Mask) -> list[int]:
        """The ``window`` rows of ``mask`` just before and just after ``row`` in its
        session's conversation."""
        session = self.sessions.codes[row]
        lo = int(np.searchsorted(self.ordered_sessions, session, "left"))
        hi = int(np.searchsorted(self.ordered_sessions, session, "right"))
        at = int(self.place[row])
        out: list[int] = []
        for step in (-1, 1):
            found, n = 0, at + step
            while found < window and lo <= n < hi:
                other = int(self.order[n])
                if mask[other]:
                    out.append(other)
                    found += 1
                n += step
        return out

    def turn(self, row: int) -> Turn:
        return Turn(
            self.id_at(row),
            self.sessions[row],
            self.users[row],
            int(self.seqs[row]),
            self.type_names[row],
            int(self.created[row]),
            self.speakers[row],
        )


class Pages:
    """A view read a page of rows at a time: each page's byte strings (vectors, sentence
    vectors, stems: a few KB a memory) become arrays as the page arrives, so that reading
    a scope whole holds one page of them at a time, never the whole scope's. Those
    blocks are below the allocator's mmap threshold: a scope's worth of them at once
    grew the C heap to the largest scope ever read, and kept it there."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._rows: list[MemoryRows] = []
        self._arrays: list[tuple[npt.NDArray[Any], ...]] = []
        self._clocks: list[Clocks] = []

    def add(self, rows: MemoryRows) -> None:
        self._arrays.append((*decode(rows, self.dimension), *decode_terms(rows)))
        self._clocks.append(Clocks.of(rows))
        self._rows.append(replace(rows, vectors=[], sentences=[], terms=[]))

    def __len__(self) -> int:
        return sum(len(rows.ids) for rows in self._rows)

    def view(self) -> ScopeView:
        """The view of the pages added, once: the pages are let go as it is built."""
        if not self._rows:
            self.add(MemoryRows([], [], [], [], [], [], [], []))
        rows = MemoryRows.joined(self._rows)
        # A column's pages go as soon as the column is joined: the scope's arrays are
        # never held twice over (pages and joined), only one column's worth of them.
        columns = [list(column) for column in zip(*self._arrays, strict=True)]
        self._arrays.clear()
        joined = []
        for column in columns:
            joined.append(np.concatenate(column))
            column.clear()
        vectors, embedded, sentences, counts, terms, term_counts, analysed = joined
        return ScopeView(
            packed_ids(rows.ids),
            Codes.of(rows.sessions),
            Codes.of(rows.users),
            np.asarray(rows.seqs, dtype=np.int64),
            np.asarray([TIER_CODES.get(t, UNKNOWN) for t in rows.tiers], dtype=np.int8),
            np.asarray([TYPE_CODES.get(t, UNKNOWN) for t in rows.types], dtype=np.int8),
            Codes.of(rows.types),
            vectors,
            embedded,
            sentences,
            counts,
            terms,
            term_counts,
            analysed,
            np.asarray(rows.dates(), dtype=np.int64),
            Codes.of(rows.said_by()),
            Clocks.joined(self._clocks),
        )
