"""Recall's weights: how much each retriever and each step of the hybrid ranking
(``fusion.py``) counts, the weights of a model that differ from the defaults, and the
shift a question asking for an inference makes.

The defaults are documented in docs/recall.md ("HYBRID: fusion, context and session",
with the measurements behind each) and were chosen by ``bench/tune_fusion.py``, a grid
search on the LoCoMo dev split with nothing specific to its conversations:

- ``text`` 0.55: BM25 (English analyzer: stemming, stopwords) carries exact names, numbers
  and rare words;
- ``vector`` 0.45: cosine catches paraphrase;
- ``entity`` 0.0: memories mentioning the query's entities. Off by default: in
  conversations the speakers' names are in every other turn, and without weighting
  entities by rarity the component adds noise;
- ``context`` 0.35: share of the best neighbouring turn's score a memory receives, for the
  20 best candidates; only the adjacent turns count (two away measured worse);
- ``session`` 1.5: share of its session's score a candidate receives, a session scoring
  the mean of its three best candidates: a conversation's evidence gathers in the
  sessions that match best;
- ``time`` 0.2: added to the base score of a memory that happened in a period the query
  names ("in June", "last year", "on 13 October 2023"), relative expressions resolved
  against the latest candidate's date; the middle of the range of weights that scored
  alike;
- ``speaker`` 0.15: added to the base score of a memory said by the one speaker the
  query names (chat-formatted memories, "Melanie: ..."); past 0.2 it starts to cost
  single-hop questions;
- ``inference_text`` 0.05: the text weight of a question asking for an inference ("would
  she enjoy...?", ``querytext.asks_inference``), the vector weight taking the rest: what
  it asks to infer is rarely in the evidence. Chosen leaving one question out, since on
  the dev split such questions are all in one conversation;
- ``links`` 0.25: graph expansion, the memories sharing a rare entity with the three
  leading candidates gain this share of their score (``fusion.add_links``); from 0.5 it
  starts to cost single-hop questions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from graphmem.memory.search.querytext import asks_inference


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
    #: share of the first ``limit`` results kept for the vector retriever's best hits
    #: that the fused ranking placed lower (``fusion.with_vector_slots``): the text,
    #: context and session scores can crowd out a turn that only the meaning finds,
    #: which costs recall when the model ranks well alone (e5-small), not with MiniLM
    vector_slots: float = 0.0
    #: share of its score a superseded memory loses (every relation it asserts was
    #: closed by a later memory; docs/concepts.md, "Corrections"), and it never ranks
    #: above a memory that closed them
    superseded: float = 0.1


#: the weights that differ for a model (by ``Embedder.name``) from MiniLM's, each chosen
#: by bench/tune_fusion.py with one LoCoMo dev conversation held out and winning on it
#: (BENCHMARKS.md, "bge-small-en-v1.5 beside MiniLM"). bge-small: two turns of context
#: to a side, not one, which won on both conversations and lost on both for MiniLM; its
#: other weights' choices split between the folds, so they stay. e5-small: two turns and
#: two of ten places for its vector ranking (``model_folds``; BENCHMARKS.md,
#: "e5-small-v2, and vector slots"), which the folds refuse MiniLM
MODEL_WEIGHTS: dict[str, dict[str, float | int]] = {
    "bge-small-en-v1.5-onnx-int8": {"context_window": 2},
    "e5-small-v2-onnx-int8": {"context_window": 2, "vector_slots": 0.2},
}


def weights_for(model: str) -> Weights:
    """Recall's weights for the embedding model ``model``."""
    return replace(Weights(), **MODEL_WEIGHTS.get(model, {}))  # type: ignore[arg-type]


def query_weights(query: str, weights: Weights) -> Weights:
    """``weights`` as a question's form asks: an inference question ranks by meaning,
    its words only breaking ties (``inference_text``). What it asks to infer ("political
    leaning", "a national park or a theme park") is rarely in the evidence, so BM25's
    matches on those words are noise ("leaning" stems to "lean on")."""
    if weights.inference_text >= weights.text or not asks_inference(query):
        return weights
    shift = weights.text - weights.inference_text
    return replace(weights, text=weights.inference_text, vector=weights.vector + shift)
