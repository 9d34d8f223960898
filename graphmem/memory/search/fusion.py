"""Hybrid recall: vector, BM25, the entity graph and conversational context, fused.

Each retriever finds candidates within the caller's scope; their scores are brought to a
common scale (cosine similarity as it is, or a memory's best sentence's when that is
closer, see ``enrich/sentences.py``; BM25 divided by the query's best BM25 score; entity
overlap as the share of the query's entities a memory mentions) and combined linearly.
A memory then borrows part of its best neighbouring turn's score: in a conversation the
answer is often the turn after the one that shares the question's words.

Weights (documented in the README; chosen by ``bench/tune_fusion.py``, a grid search on
the LoCoMo dev split with nothing specific to its conversations):

- ``text`` 0.55: BM25 (English analyzer: stemming, stopwords) carries exact names, numbers
  and rare words;
- ``vector`` 0.45: cosine catches paraphrase;
- ``entity`` 0.0: memories mentioning the query's entities. Off by default: in
  conversations the speakers' names are in every other turn, and without weighting
  entities by rarity the component adds noise (0.568 vs 0.639 R@10 at 0.15);
- ``context`` 0.35: share of the best neighbouring turn's score a memory receives, for the
  20 best candidates; only the adjacent turns count (two away measured worse: 0.670
  against 0.685 R@10 on cached candidates);
- ``session`` 1.5: share of its session's score a candidate receives, a session scoring
  the mean of its three best candidates: a conversation's evidence gathers in the
  sessions that match best;
- ``time`` 0.2: added to the base score of a memory that happened in a period the query
  names ("in June", "last year", "on 13 October 2023"), relative expressions resolved
  against the latest candidate's date. Any weight from 0.1 to 0.4 scores the same on the
  dev split: it lifts one conversation (0.747 to 0.760 R@10) and leaves the other as it
  was (0.808), so the middle of that plateau;
- ``speaker`` 0.15: added to the base score of a memory said by the one speaker the
  query names (chat-formatted memories, "Melanie: ..."). Any weight from 0.1 to 0.2
  scores the same on the dev split and lifts both conversations (0.760 to 0.781 and
  0.808 to 0.817 R@10); 0.3 starts to cost single-hop questions;
- ``inference_text`` 0.05: the text weight of a question asking for an inference ("would
  she enjoy...?", ``asks_inference``), the vector weight taking the rest: what it asks to
  infer is rarely in the evidence. Chosen leaving one question out, since on the dev
  split such questions are all in one conversation (open-domain 0.409 to 0.545 R@10);
- ``links`` 0.25: graph expansion, the memories sharing a rare entity with the three
  leading candidates gain this share of their score (``add_links``). Any weight from
  0.1 to 0.4 scores the same on the dev split and lifts both conversations' multi-hop
  questions (0.424 to 0.440 and 0.468 to 0.514); 0.5 starts to cost single-hop ones.

Reciprocal-rank fusion was measured as the alternative and loses to BM25 alone on the dev
split (see BENCHMARKS.md): rank fusion throws away how much better one hit is than the next.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Generic, Protocol, TypeVar

from graphmem.memory.search.timeexpr import parse_times

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)
_TOKEN = re.compile(r"[a-z0-9]+")
#: words that make a question ask for an inference (``asks_inference``)
_INFERENCE = frozenset({"would", "might", "likely", "unlikely", "probably"})


class Retriever(StrEnum):
    HYBRID = "hybrid"
    VECTOR = "vector"
    FULLTEXT = "fulltext"


@dataclass(frozen=True)
class Weights:
    text: float = 0.55
    vector: float = 0.45
    entity: float = 0.0
    context: float = 0.35
    #: candidates each retriever contributes before fusion
    candidates: int = 100
    #: vector candidates of a search answered by the graph (no view of its scope in
    #: memory): a probe's cost grows with them (HNSW's k, and every hit's sentence
    #: vectors on the wire), and LoCoMo's recall is the same at 20 as at 100
    graph_vector_candidates: int = 20
    #: how many of the best fused candidates look at their neighbouring turns
    context_pool: int = 20
    #: how many turns on each side count as neighbours, and how much a turn two away
    #: counts compared with the adjacent one
    context_window: int = 1
    context_decay: float = 0.8
    #: share of its session's score a memory receives; a session scores the mean base
    #: score of its ``session_top`` best candidates
    session: float = 1.5
    session_top: int = 3
    #: added to the base score of a memory that happened in a period the query names
    #: ("in May 2023", "last week"; ``timeexpr.py``)
    time: float = 0.2
    #: added to the base score of a memory said by the one speaker the query names
    speaker: float = 0.15
    #: graph expansion: share of a leading memory's score that a memory sharing a rare
    #: entity with it receives (``add_links``); the ``link_seeds`` leading before the
    #: context step lend, and an entity links when at most ``link_max_mentions`` memories
    #: of the scope mention it
    links: float = 0.25
    link_seeds: int = 3
    link_max_mentions: int = 10
    #: the text weight for a question asking for an inference ("would she enjoy
    #: Vivaldi?", ``asks_inference``); the vector weight takes the rest
    inference_text: float = 0.05


#: the weights that differ for a model (by ``Embedder.name``) from MiniLM's, each chosen
#: by bench/tune_fusion.py with one LoCoMo dev conversation held out and winning on it
#: (BENCHMARKS.md, "bge-small-en-v1.5 beside MiniLM"). bge-small: two turns of context
#: to a side, not one: +0.013 and +0.014 R@10 on the two conversations (MiniLM: -0.018
#: and -0.007); its other weights' choices split between the folds, so they stay
MODEL_WEIGHTS: dict[str, dict[str, float | int]] = {
    "bge-small-en-v1.5-onnx-int8": {"context_window": 2},
}


def weights_for(model: str) -> Weights:
    """Recall's weights for the embedding model ``model``."""
    return replace(Weights(), **MODEL_WEIGHTS.get(model, {}))  # type: ignore[arg-type]


def terms(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stopwords (safe inside a Lucene query)."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower()):
        if token not in STOPWORDS:
            seen.setdefault(token, None)
    return list(seen)


def asks_inference(query: str) -> bool:
    """Whether a question asks what someone would or might do, or is likely to: an
    inference from what they said ("Would Melanie enjoy Vivaldi?", answered by "I love
    classical music"), rather than a fact they stated."""
    return not _INFERENCE.isdisjoint(_TOKEN.findall(query.lower()))


def query_weights(query: str, weights: Weights) -> Weights:
    """``weights`` as a question's form asks: an inference question ranks by meaning,
    its words only breaking ties (``inference_text``). What it asks to infer ("political
    leaning", "a national park or a theme park") is rarely in the evidence, so BM25's
    matches on those words are noise ("leaning" stems to "lean on")."""
    if weights.inference_text >= weights.text or not asks_inference(query):
        return weights
    shift = weights.text - weights.inference_text
    return replace(weights, text=weights.inference_text, vector=weights.vector + shift)


def lucene_query(text: str, scope: str) -> str | None:
    """BM25 over the query's terms, restricted to documents carrying every token of
    ``scope`` (``models.query_scope_tokens``; none for a whole tenant's index). The scope
    clauses are boosted by 0: they filter without scoring, since a matching clause would
    add the same constant to every hit and squash the normalised BM25 scores fusion
    relies on."""
    words = terms(text)
    if not words:
        return None
    query = f"content:({' OR '.join(words)})"
    required = " AND ".join(f"scopeToken:{token}^0" for token in scope.split())
    return f"{query} AND {required}" if required else query


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


def named_speaker(query: str, speakers: set[str]) -> str | None:
    """The one of ``speakers`` whose every word the query has ("what does Melanie
    like?"), or None: none, or several (a question about two people favours neither)."""
    words = set(_TOKEN.findall(query.lower()))
    named = [s for s in speakers if (mine := _TOKEN.findall(s)) and words.issuperset(mine)]
    return named[0] if len(named) == 1 else None


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
