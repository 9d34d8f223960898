"""Hybrid recall: vector, BM25, the entity graph and conversational context, fused.

Each retriever finds candidates within the caller's scope; their scores are brought to a
common scale (cosine similarity as it is, or a memory's best sentence's when that is
closer, see ``enrich/sentences.py``; BM25 divided by the query's best BM25 score; entity
overlap as the share of the query's entities a memory mentions) and combined linearly
(``fuse``). The periods and the one speaker the query names add to a memory's base score
(``add_periods``, ``add_speaker``); memories sharing a rare entity with the leading few
borrow part of their score (``add_links``); and a memory borrows part of its best
neighbouring turn's score and of its session's (``add_context``): in a conversation the
answer is often the turn after the one that shares the question's words. How much each
counts is ``weights.py``'s.

Reciprocal-rank fusion was measured as the alternative and loses to BM25 alone on the dev
split (see BENCHMARKS.md): rank fusion throws away how much better one hit is than the next.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Generic, Protocol, TypeVar

from graphmem.memory.search.querytext import named_speaker
from graphmem.memory.search.timeexpr import parse_times
from graphmem.memory.search.weights import Weights


class Retriever(StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    FULLTEXT = "fulltext"


class Turn(Protocol):
    """What fusion needs of a memory: which it is and where it sits in its conversation
    (a ``MemoryItem`` qualifies; search ranks lighter rows and fetches items at the end)."""

    @property
    def id(self) -> str: ...
    @property
    def session_id(self) -> str: ...
    @property
    def seq(self) -> int: ...


class Dated(Turn, Protocol):
    """A turn that knows when it happened (epoch seconds; 0 when not known)."""

    @property
    def created(self) -> int: ...


class Spoken(Dated, Protocol):
    """A turn that knows who said it ("" when not known; ``enrich/sentences.speaker``)."""

    @property
    def speaker(self) -> str: ...


T = TypeVar("T", bound=Turn)
R = TypeVar("R")
D = TypeVar("D", bound=Dated)
S = TypeVar("S", bound=Spoken)


@dataclass
class Candidate(Generic[T]):
    item: T
    cosine: float = 0.0
    bm25: float = 0.0
    entity: float = 0.0
    base: float = 0.0
    score: float = 0.0
    sources: set[str] = field(default_factory=set)


def fuse(
    vector_hits: Sequence[tuple[T, float]],
    text_hits: Sequence[tuple[T, float, float]],
    entity_hits: dict[str, float],
    weights: Weights,
) -> dict[str, Candidate[T]]:
    """Base scores of every candidate (before the context step)."""
    pool: dict[str, Candidate[T]] = {}
    for item, cosine in vector_hits:
        c = pool.setdefault(item.id, Candidate(item))
        c.cosine = cosine
        c.sources.add("vector")
    best_bm25 = max((s for _, s, _ in text_hits), default=0.0)
    for item, bm25, cosine in text_hits:
        c = pool.setdefault(item.id, Candidate(item))
        c.bm25 = bm25 / best_bm25 if best_bm25 > 0 else 0.0
        c.cosine = c.cosine or cosine
        c.sources.add("fulltext")
    for item_id, share in entity_hits.items():
        if item_id in pool:
            pool[item_id].entity = share
            pool[item_id].sources.add("entity")
    for c in pool.values():
        c.base = (
            weights.text * c.bm25
            + weights.vector * max(c.cosine, 0.0)
            + (weights.entity * c.entity)
        )
        c.score = c.base
    return pool


def base_scores(
    vector_hits: Sequence[tuple[S, float]],
    text_hits: Sequence[tuple[S, float, float]],
    entity_hits: dict[str, float],
    query: str,
    weights: Weights,
) -> dict[str, Candidate[S]]:
    """Every candidate's base score: the retrievers fused (``fuse``), then the periods
    and the speaker the query names (``add_periods``, ``add_speaker``). What search and
    the fusion tuner both rank before the context step."""
    pool = fuse(vector_hits, text_hits, entity_hits, weights)
    add_periods(pool, query, weights)
    add_speaker(pool, query, weights)
    return pool


def in_periods(query: str, when: dict[str, int]) -> set[str]:
    """The memories (id: when it happened, epoch seconds; 0 unknown) that happened in a
    period the query names. Relative expressions ("last week", "in June") are resolved
    against the latest of them: in a conversation, the question's now is its last turn."""
    known = [t for t in when.values() if t > 0]
    if not known:
        return set()
    now = datetime.fromtimestamp(max(known), UTC)
    ranges = [(r.start.timestamp(), r.end.timestamp()) for r in parse_times(query, now)]
    return {i for i, t in when.items() if t > 0 and any(lo <= t < hi for lo, hi in ranges)}


def add_time(pool: dict[str, Candidate[T]], matched: set[str], weights: Weights) -> None:
    """``time`` more base score for the candidates in a period the query names."""
    for item_id in matched & pool.keys():
        c = pool[item_id]
        c.base += weights.time
        c.score = c.base
        c.sources.add("time")


def add_periods(pool: dict[str, Candidate[D]], query: str, weights: Weights) -> None:
    """Fusion's time step: ``add_time`` for the candidates ``in_periods`` finds."""
    if weights.time > 0 and pool:
        add_time(pool, in_periods(query, {i: c.item.created for i, c in pool.items()}), weights)


def add_speaker(pool: dict[str, Candidate[S]], query: str, weights: Weights) -> None:
    """Fusion's speaker step: ``speaker`` more base score for the candidates said by the
    one speaker the query names. A question about a person is mostly answered by what
    they said themselves; the other speaker's turns name them too ("Thanks, Melanie!"),
    which is why BM25 alone does not tell the two apart."""
    if weights.speaker <= 0 or not pool:
        return
    who = named_speaker(query, {c.item.speaker for c in pool.values()})
    if who is None:
        return
    for c in pool.values():
        if c.item.speaker == who:
            c.base += weights.speaker
            c.score = c.base
            c.sources.add("speaker")


def add_links(
    pool: dict[str, Candidate[T]],
    linked: Sequence[tuple[str, T, float]],
    weights: Weights,
) -> None:
    """Graph expansion: every memory linked to a leading one through a rare entity
    (memory, linked memory, its best cosine) gains ``links`` times the best score among
    the memories it is linked from; one not yet in the pool joins it on its own cosine
    first. A second hop for questions whose answer is split over memories that share a
    name but not the question's words."""
    gains: dict[str, float] = {}
    for of, item, cosine in linked:
        if of not in pool:
            continue
        if item.id not in pool:
            base = weights.vector * max(cosine, 0.0)
            pool[item.id] = Candidate(item, cosine=cosine, base=base, score=base)
        gains[item.id] = max(gains.get(item.id, 0.0), weights.links * pool[of].score)
    for item_id, gain in gains.items():
        pool[item_id].score += gain
        pool[item_id].sources.add("link")


def session_scores(pool: dict[str, Candidate[T]], weights: Weights) -> dict[str, float]:
    """Each session's score: the mean of its ``session_top`` best base scores (one lucky
    turn does not make a session)."""
    in_session: dict[str, list[float]] = {}
    for c in pool.values():
        in_session.setdefault(c.item.session_id, []).append(c.base)
    return {
        key: sum(sorted(bases, reverse=True)[: weights.session_top]) / weights.session_top
        for key, bases in in_session.items()
    }


def likely_results(pool: dict[str, Candidate[T]], weights: Weights, n: int) -> list[str]:
    """The ``n`` candidates that lead before the context step (base and session score):
    the final ranking mostly comes from these and the neighbours of the head, so a
    search without its scope in memory reads their items beside the neighbours."""
    session = session_scores(pool, weights)
    ahead = sorted(
        pool.values(),
        key=lambda c: c.base + weights.session * session[c.item.session_id],
        reverse=True,
    )
    return [c.item.id for c in ahead[:n]]


def with_vector_slots(
    order: list[R],
    key: Callable[[R], str],
    vector_hits: Sequence[tuple[Turn, float]],
    limit: int,
    share: float,
    skip: Collection[str] = (),
) -> list[R]:
    """The final order (``key``: a row's memory id) with the last ``round(share *
    limit)`` of its first ``limit`` places given to the vector retriever's best hits that
    it ranked below them (best cosine first; none of ``skip``), the rest of the order
    after them. Each keeps its fused score, so those places are not in score order."""
    slots = round(share * limit)
    if slots <= 0 or len(order) <= limit - slots:
        return order
    head = order[: limit - slots]
    taken = {key(r) for r in head}
    rows = {key(r): r for r in order}
    for turn, _ in sorted(vector_hits, key=lambda hit: hit[1], reverse=True):
        if len(head) >= limit:
            break
        if turn.id not in taken and turn.id in rows and turn.id not in skip:
            head.append(rows[turn.id])
            taken.add(turn.id)
    return head + [r for r in order if key(r) not in taken]


def add_context(
    pool: dict[str, Candidate[T]],
    neighbours: Sequence[tuple[str, T, float]],
    weights: Weights,
) -> None:
    """Every memory gains ``context`` times the best (distance-decayed) base score among
    its neighbouring turns, and ``session`` times its session's score (the mean of the
    session's ``session_top`` best base scores: one lucky turn does not make a session);
    neighbours not yet in the pool join it on their own cosine."""
    around: dict[str, dict[str, float]] = {}
    for _, item, cosine in neighbours:
        if item.id not in pool:
            pool[item.id] = Candidate(item, cosine=cosine, base=weights.vector * max(cosine, 0.0))
            pool[item.id].sources.add("context")
    by_of: dict[str, list[T]] = {}
    for of, item, _ in neighbours:
        by_of.setdefault(of, []).append(item)
    for of, items in by_of.items():
        anchor = pool[of].item.seq if of in pool else None
        before = sorted(
            (i for i in items if anchor is None or i.seq < anchor), key=lambda i: -i.seq
        )
        after = sorted(
            (i for i in items if anchor is not None and i.seq > anchor), key=lambda i: i.seq
        )
        for side in (before, after):
            for distance, item in enumerate(side, start=1):
                factor = weights.context_decay ** (distance - 1)
                for a, b in ((of, item.id), (item.id, of)):
                    links = around.setdefault(a, {})
                    links[b] = max(links.get(b, 0.0), factor)
    session_score = session_scores(pool, weights)
    for item_id, c in pool.items():
        best = max(
            (pool[n].base * f for n, f in around.get(item_id, {}).items() if n in pool),
            default=0.0,
        )
        c.score = (
            c.base + weights.context * best + weights.session * session_score[c.item.session_id]
        )
