"""The Lucene query recall builds: terms, and scope clauses that filter without scoring."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from graphmem.domain.models import query_scope_tokens, scope_token, scope_tokens
from graphmem.memory.search.fusion import (
    add_links,
    add_speaker,
    add_time,
    fuse,
    in_periods,
    with_vector_slots,
)
from graphmem.memory.search.querytext import asks_inference, lucene_query, named_speaker
from graphmem.memory.search.weights import Weights, query_weights, weights_for


@dataclasses.dataclass(frozen=True)
class T:
    """A turn as fusion sees it."""

    id: str
    speaker: str = ""
    session_id: str = "s"
    seq: int = 0
    created: int = 0


def test_lucene_query_requires_every_scope_token_with_zero_boost() -> None:
    scope = query_scope_tokens("acme", "s1", "u1")
    query = lucene_query("Where did the trip to Paris go?", scope)
    assert query is not None
    assert query.startswith("content:(trip OR paris OR go)")
    assert len(scope.split()) == 2
    for token in scope.split():
        assert f"AND scopeToken:{token}^0" in query


def test_a_search_does_not_require_the_tenant_token_of_its_own_index() -> None:
    # the index is the tenant's (models.tenant_fulltext): its token would filter nothing
    assert scope_token("acme") not in query_scope_tokens("acme", "s1", "u1")
    assert query_scope_tokens("acme", user_id="u1") == scope_tokens("acme", user_id="u1").split()[1]
    assert (
        lucene_query("the trip to Paris", query_scope_tokens("acme")) == "content:(trip OR paris)"
    )


def test_lucene_query_of_stopwords_only_is_none() -> None:
    assert lucene_query("what is it?", scope_tokens("acme")) is None


def test_memories_in_a_period_the_query_names_are_found_against_the_latest_date() -> None:
    def at(year: int, month: int, day: int) -> int:
        return int(datetime(year, month, day, 12, tzinfo=UTC).timestamp())

    when = {"may": at(2023, 5, 8), "june": at(2023, 6, 20), "oct": at(2023, 10, 13), "new": 0}
    # "in June" is the latest June on or before the newest memory (Oct 2023), not this year's
    assert in_periods("When did Melanie go camping in June?", when) == {"june"}
    assert in_periods("What did she paint on October 13, 2023?", when) == {"oct"}
    assert in_periods("What happened between May and June 2023?", when) == {"may", "june"}
    assert in_periods("What did she paint?", when) == set()  # no period named
    assert in_periods("in June", {"new": 0}) == set()  # no dates known: nothing to resolve


def test_time_adds_its_weight_to_the_base_score_of_memories_in_the_period() -> None:
    w = Weights(time=0.2)
    pool = fuse([(T("a"), 0.5), (T("b"), 0.5)], [], {}, w)
    add_time(pool, {"b", "not-a-candidate"}, w)
    assert pool["b"].base == pytest.approx(pool["a"].base + 0.2)
    assert pool["b"].score == pool["b"].base and "time" in pool["b"].sources
    assert set(pool) == {"a", "b"}  # a memory outside the pool does not join it


def test_the_one_speaker_a_question_names_is_found_by_every_word() -> None:
    speakers = {"melanie", "caroline", "jon doe", ""}
    assert named_speaker("What activities does Melanie partake in?", speakers) == "melanie"
    assert named_speaker("What did Jon Doe say?", speakers) == "jon doe"
    assert named_speaker("What did Jon say?", speakers) is None  # not every word
    assert named_speaker("What do Melanie and Caroline share?", speakers) is None
    assert named_speaker("What did she paint?", speakers) is None
    assert named_speaker("Mel's kids?", {"mel", "melanie"}) == "mel"  # words, not prefixes


def test_speaker_adds_its_weight_to_the_named_speakers_memories_only() -> None:
    w = Weights(speaker=0.15)
    hits = [(T("a", "alice"), 0.5), (T("b", "bob"), 0.5), (T("c", ""), 0.5)]
    pool = fuse(hits, [], {}, w)
    add_speaker(pool, "What does Bob like?", w)
    assert pool["b"].base == pytest.approx(pool["a"].base + 0.15)
    assert pool["b"].score == pool["b"].base and "speaker" in pool["b"].sources
    assert pool["a"].base == pool["c"].base == pytest.approx(0.45 * 0.5)
    untouched = fuse(hits, [], {}, w)
    add_speaker(untouched, "What does Bob like?", Weights(speaker=0.0))
    assert {i: c.base for i, c in untouched.items()} == {
        i: pytest.approx(0.45 * 0.5) for i in "abc"
    }


def test_links_lend_a_share_of_the_best_linking_score_and_bring_new_memories_in() -> None:
    w = Weights(links=0.5)
    pool = fuse([(T("seed"), 1.0), (T("weak"), 0.4), (T("in"), 0.2)], [], {}, w)
    pool["seed"].score, pool["weak"].score = 2.0, 1.0
    before_in = pool["in"].score
    linked = [
        ("seed", T("in"), 0.2),  # already a candidate: gains half the seed's score
        ("weak", T("in"), 0.2),  # a weaker link does not add to the stronger one
        ("seed", T("new"), 0.6),  # joins on its own cosine, then gains
        ("gone", T("stray"), 0.9),  # linked from a memory not in the pool: ignored
    ]
    add_links(pool, linked, w)
    assert pool["in"].score == pytest.approx(before_in + 1.0)
    assert pool["new"].base == pytest.approx(0.45 * 0.6)
    assert pool["new"].score == pytest.approx(0.45 * 0.6 + 1.0)
    assert "link" in pool["new"].sources and "stray" not in pool
    assert pool["seed"].score == 2.0  # lending costs the seed nothing


def test_a_question_asking_for_an_inference_is_told_from_one_asking_for_a_fact() -> None:
    assert asks_inference("Would Melanie likely enjoy the song by Vivaldi?")
    assert asks_inference("What would Caroline's political leaning be?")
    assert asks_inference("What personality traits might Melanie say Caroline has?")
    assert asks_inference("Is Jon probably moving to Berlin?")
    assert not asks_inference("What did Melanie paint last week?")
    assert not asks_inference("When did Caroline go to the LGBTQ support group?")
    assert not asks_inference("What did Jon say about the likelihood of rain?")  # words


def test_an_inference_question_ranks_by_meaning_with_words_breaking_ties() -> None:
    w = Weights(text=0.55, vector=0.45, inference_text=0.05)
    asked = query_weights("Would she enjoy Vivaldi?", w)
    assert (asked.text, asked.vector) == pytest.approx((0.05, 0.95))
    assert dataclasses.replace(asked, text=w.text, vector=w.vector) == w  # nothing else
    assert query_weights("What did she play?", w) is w
    assert query_weights("Would she?", Weights(inference_text=0.55)).text == 0.55  # off
    # a memory matching the inference's words loses to one close in meaning
    words = T("words")  # "I lean on my friends": BM25 matches "leaning"
    meaning = T("meaning")  # "I joined the church choir": no shared word
    vector_hits = [(words, 0.2), (meaning, 0.6)]
    text_hits = [(words, 4.0, 0.2)]
    plain = fuse(vector_hits, text_hits, {}, w)
    assert plain["words"].base > plain["meaning"].base
    inferred = fuse(vector_hits, text_hits, {}, asked)
    assert inferred["meaning"].base > inferred["words"].base


def test_vector_slots_give_the_last_places_to_the_best_vector_hits_ranked_below() -> None:
    order = [f"m{i}" for i in range(12)]
    hits = [(T("m11"), 0.9), (T("m2"), 0.95), (T("m10"), 0.8), (T("m9"), 0.7)]
    ranked = with_vector_slots(order, str, hits, 5, 0.4)
    # three fused places, then m11 and m10 (m2 is already in), the rest fused as before
    assert ranked == ["m0", "m1", "m2", "m11", "m10", "m3", "m4", "m5", "m6", "m7", "m8", "m9"]
    assert with_vector_slots(order, str, hits, 5, 0.0) == order
    assert with_vector_slots(order, str, hits, 2, 0.2) == order  # round(0.4) places: none
    # a hit the final order does not hold (filtered by type) takes no place
    assert with_vector_slots(order[:4], str, [(T("x"), 1.0)], 5, 0.4) == order[:4]
    assert with_vector_slots(order, str, [(T("x"), 1.0)], 5, 0.4) == order
    # a memory to ``skip`` (superseded) takes no place: the next best hit does
    assert with_vector_slots(order, str, hits, 5, 0.4, {"m11"})[3:5] == ["m10", "m9"]


def test_only_a_model_that_ranks_well_alone_keeps_vector_slots() -> None:
    assert Weights().vector_slots == 0.0
    assert weights_for("all-MiniLM-L6-v2-onnx-int8").vector_slots == 0.0
    e5 = weights_for("e5-small-v2-onnx-int8")
    assert (e5.vector_slots, e5.context_window) == (0.2, 2)
