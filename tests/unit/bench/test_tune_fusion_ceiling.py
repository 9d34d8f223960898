"""bench/tune_fusion.py's ceiling: how much evidence each retriever's list holds, and the
three top-10 lists together, on candidates built by hand."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bench.tune_fusion import ceiling
from graphmem.memory.search.weights import Weights


@dataclass(frozen=True)
class Turn:
    id: str
    session_id: str
    seq: int
    created: int = 0
    speaker: str = ""


def case(conversation: str, evidence: set[str]) -> tuple[int, set[str], dict, str]:
    turns = [Turn(f"m{i}", "s1", i) for i in range(40)]
    # the vector retriever ranks m0..m19 first, BM25 ranks m39 down to m20: the evidence
    # m5 is vector-only, m25 a BM25 hit at its 15th place (beyond its own top 10)
    raw = {
        "query": "what happened",
        "vector": [(t, 1.0 - i / 100) for i, t in enumerate(turns[:20])],
        "text": [(t, 40.0 - i, 0.1) for i, t in enumerate(reversed(turns[20:]))],
        "entity": {},
        "near": [],
        "dia": {t.id: f"D1:{t.seq}" for t in turns},
    }
    return (4, evidence, raw, conversation)


def test_the_lists_together_hold_what_each_alone_misses() -> None:
    w = replace(Weights(), context=0.0, session=0.0, links=0.0)
    table = ceiling([case("a", {"D1:5", "D1:39"}), case("b", {"D1:25", "D1:99"})], w)

    a, b = table["a"], table["b"]
    assert a["vector@10"] == 0.5  # m5, not m39
    assert a["bm25@10"] == 0.5  # m39, not m5
    assert a["three top-10s"] == 1.0
    # m25 is BM25's 15th: within its top 20 only; D1:99 was never a candidate
    assert b["bm25@10"] == 0.0 and b["bm25@20"] == 0.5
    assert b["any candidate"] == 0.5
    assert all(table["all"][k] == round((a[k] + b[k]) / 2, 4) for k in a)
    for row in table.values():
        assert row["hybrid@10"] <= row["hybrid@20"] <= row["hybrid@30"] <= row["any candidate"]
