"""The benchmark programs run end to end on tiny inputs, so they cannot rot.

Smoke only: nothing here asserts a speed (figures come from full runs, BENCHMARKS.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, Stack


def run_bench(module: str, out: Path, stack: Stack, *args: str) -> dict:
    env = os.environ | {
        "NEO4J_URI": stack.neo4j_uri,
        "REDIS_URL": stack.redis_url,
        "NEO4J_PASSWORD": stack.neo4j_password,
    }
    done = subprocess.run(
        [sys.executable, "-m", module, "--quick", "--out", str(out), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict = json.loads(out.read_text())
    return result


def test_durability_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.durability", tmp_path / "d.json", stack)
    assert set(result["modes"]) == {"always", "everysec", "no"}
    assert result["modes"]["always"]["max_lost"] == 0
    assert all(m["runs"][0]["acknowledged"] > 0 for m in result["modes"].values())


def test_entities_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.entities", tmp_path / "e.json", stack)
    assert result["docs"] == 60
    assert result["resolution"]["mentions"] > 0
    assert result["spill_items_per_s"]["entities_on"] > 0
    assert result["ner_docs_per_s"]["tok2vec+ner"] > 0
    writes = result["entity_write_ms"]
    assert [w["mentions"] for w in writes] == [100, 1000]
    assert all(w["added"] > 0 and w["recounted"] > 0 for w in writes)


def test_locomo_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.locomo", tmp_path / "l.json", stack)
    assert set(result["retrievers"]) == {"hybrid", "fulltext", "vector"}
    for summary in result["retrievers"].values():
        assert summary["questions"] > 0
        assert 0.0 <= summary["r5"] <= summary["r10"] <= 1.0


def test_perf_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.perf", tmp_path / "p.json", stack)
    assert result["ingest_messages_per_s"] > 0
    assert result["graph_writes"]["per_item_rows_per_s"] > 0
    assert [a["clients"] for a in result["add_memory"]] == [1, 16, 64]
    assert all(a["p50_ms"] <= a["p99_ms"] for a in result["add_memory"])
    workloads = {(s["retriever"], s["scope"], s["clients"]) for s in result["search"]}
    assert {("hybrid", "user", 1), ("hybrid", "tenant", 8), ("vector", "tenant", 1)} <= workloads
    assert all(s["queries"] == 10 and s["p50_ms"] <= s["p95_ms"] for s in result["search"])
    stages = result["search"][0]["stages_p50_ms"]
    assert "embed query" in stages
    # a user's search is served from its scope's view, BM25 included: no Lucene statement;
    # the view is read once, by the first search (the results' items come with the
    # neighbours' read, or memory/get_by_ids for those it did not read)
    assert "memory/text_hits" not in stages
    first = next(s for s in result["search"] if s["scope"] == "user, first search")
    assert "memory/scope_rows_user" in first["stages_p50_ms"]
    assert result["add_cpu_ms"] and all(v >= 0 for v in result["add_cpu_ms"].values())


def test_soak_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    # a Redis database of its own (tests use 0, and FLUSHDB 8 and 9): a process sharing the
    # stack's Redis with another Neo4j (test_faults) spills every over-budget session there
    result = run_bench("bench.soak", tmp_path / "s.json", stack, "--redis-db", "13")
    assert result["summary"]["errors"] == 0, result["error_examples"]
    assert result["verify"]["acknowledged"] > 0
    assert result["verify"]["lost"] == 0 and result["verify"]["altered"] == 0
    assert len(result["samples"]) >= 5
    assert all(s["rss_mb"] > 0 for s in result["samples"])
    assert {"addMemory", "addMemories", "spill", "recall", "search", "churn"} <= set(
        result["requests"]
    )
    assert result["churn_documents"] > 0 and result["events"].get("ADDED", 0) > 0
    assert (tmp_path / "s.png").exists()


def test_fuzz_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.fuzz", tmp_path / "f.json", stack)
    assert result["requests"] >= 200
    assert not result["operations_missed"]
    assert result["server_alive_after"]
    assert sum(result["per_status"].values()) == result["requests"]


def test_ingest_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    # database 5: the bench's default (9) is the tiers and replicas tests'
    result = run_bench(
        "bench.ingest", tmp_path / "i.json", stack, "--workers", "1", "--redis-db", "5"
    )
    assert result["limits"]["embed_items_per_s"] > 0
    (run,) = result["results"]
    assert run["errors"] == 0
    # every turn in the graph, with its vector, spilled out of the hot tier
    assert run["graph"]["memories"] == run["graph"]["with_vectors"] == run["turns"]
    assert run["graph"]["spilled"] == run["turns"]
    assert run["graph"]["mentions"] > 0
    assert run["cpu_seconds"]["enrichment workers"] > 0


def test_failover_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.failover", tmp_path / "f.json", stack)
    assert set(result["scenarios"]) == {"everysec", "everysec + WAIT 1"}
    for scenario in result["scenarios"].values():
        (run,) = scenario["runs"]
        assert run["acknowledged"] > 0 and run["promoted_s"] is not None
        assert run["resume_s"] < 30  # adds to the dead master's sessions worked again
    assert result["scenarios"]["everysec + WAIT 1"]["lost_total"] == 0


def test_neighbours_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    # a Redis database of its own, emptied before and after (B's backlog dies with the run)
    result = run_bench("bench.neighbours", tmp_path / "n.json", stack, "--redis-db", "14")
    assert list(result["attacks"]) == [
        "schema_recursion",
        "fragment_search",
        "aliased_search",
        "invalid",
        "typename",
        "plain_search",
        "bad_offset",
        "tokenizer",
    ]
    assert result["verdicts"]["every_attack_ran"]
    for name, attack in result["attacks"].items():
        assert attack["ran"] and attack["b"]["requests"] > 0, (name, attack["b"])
        assert sum(attack["b"]["outcomes"].values()) == attack["b"]["requests"], name
        assert all(attack["c"][op]["n"] > 0 for op in ("add", "search", "hot")), name
        assert attack["b_5xx_or_internal"] == 0, (name, attack["b"]["outcomes"])
        assert attack["c_5xx_or_internal"] == 0, (name, attack["c_problems"])
    assert result["five_xx_or_internal"] == 0 and result["verdicts"]["no_5xx_or_internal"]
    # C's sessions were filled (and enriched) before the baseline; the probes ran: C's
    # adds were searched for by meaning
    assert result["c_prefilled"] > 0
    assert result["baseline"]["findable"]["found"] > 0
    tokenizer = result["attacks"]["tokenizer"]["findable"]
    assert tokenizer["probes"] + tokenizer["unprobed"] > 0
    assert result["rss"]["baseline_mb"] and result["rss"]["after_settle_mb"]
    assert set(result["verdicts"]) >= {
        "c_within_2x_every_attack",
        "c_searchable_within_2s",
        "c_never_refused",
        "rss_back_within_50mb",
    }
    assert (tmp_path / "n.png").exists()


def test_langgraph_store_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.langgraph_store", tmp_path / "lg.json", stack)
    for op in ("put", "get", "search_query", "search_list"):
        assert result["graphmem"][op]["runs"] > 0 and result["graphmem"][op]["p50_ms"] > 0
        assert result["in_memory"][op]["runs"] > 0  # in-process: may round to 0.0 ms
    assert result["graphmem"]["fill_items_per_s"] > 0


def test_relevance_bench_smoke(tmp_path: Path, stack: Stack) -> None:
    result = run_bench("bench.relevance", tmp_path / "r.json", stack)
    assert set(result["models"]) == {"minilm-int8", "e5-small-int8"}
    for model in result["models"].values():
        medians = [model["medians"][str(r)] for r in result["ranks"]]
        assert medians == sorted(medians, reverse=True)  # best rank first
        assert model["fitted"]["floor"] < model["fitted"]["ceiling"]
    assert result["models"]["e5-small-int8"]["in_use"]["floor"] > 0.0
