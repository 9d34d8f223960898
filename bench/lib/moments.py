"""Reads at a moment beside current reads (``bench/perf.py``): the same hybrid searches of
a user and of the whole tenant now, at a record time (``asOf``) and at a valid time
(``validAt``) in the middle of what is searched, and now without the superseded read
(``memory/superseded``, what it adds to a search). The workloads take turns within each
round, so that a noisy machine weighs on all of them alike; each figure is the median
over the rounds.

The corpus (``bench/lib/corpus.py``) records memory ``n`` at 2024-01-01 plus ``n``
minutes (its ``createdAt``, which stands in for ``recordedAt``), its valid time the same:
a user's searches look at the middle of that user's thousand memories, the tenant's at
the middle of all of them, so that a moment sees half of what is searched.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.lib import corpus
from bench.lib.stats import percentile
from graphmem.domain.moments import NOW, Moment
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.search.fusion import Retriever

START = datetime(2024, 1, 1, tzinfo=UTC)
KINDS = ("now", "asOf", "validAt", "now, no superseded read")


def middle(size: int, user: str | None) -> datetime:
    """The middle of the record (and valid) times of a user's memories, or of all."""
    per_user = corpus.SESSIONS_PER_USER * corpus.TURNS_PER_SESSION
    if user is None:
        return START + timedelta(minutes=size // 2)
    n = corpus.user_ids(size).index(user)
    return START + timedelta(minutes=n * per_user + per_user // 2)


def moment_of(kind: str, size: int, user: str | None) -> Moment:
    if kind == "asOf":
        return Moment.of(as_of=middle(size, user))
    if kind == "validAt":
        return Moment.of(valid_at=middle(size, user))
    return NOW


async def moment_latency(
    service: Memory,
    tenant: str,
    size: int,
    questions: list[str],
    timed: Any,
    forget: Any,
    clock_of: Any,
    rounds: int = 5,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """p50 and p95 of each kind of read (``KINDS``) per scope, medians over ``rounds``,
    and by scope the median wall time of ``memory/superseded`` in the current search
    (``clock_of``: perf.py's StageClock)."""
    regulars = corpus.user_ids(size)[:10]
    ranker = service.ranker
    weights = ranker.weights
    out = []
    stages: dict[str, float] = {}
    for scope in ("user", "tenant"):

        def queries(kind: str, scope: str = scope) -> list[RecallQuery]:
            users = [
                regulars[n % len(regulars)] if scope == "user" else None
                for n in range(len(questions))
            ]
            return [
                RecallQuery(
                    query=q,
                    user_id=u,
                    retriever=Retriever.HYBRID,
                    limit=10,
                    moment=moment_of(kind, size, u),
                )
                for q, u in zip(questions, users, strict=True)
            ]

        await timed(service, tenant, queries("asOf")[:20])  # the plans of the moment reads
        runs: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
        superseded: list[float] = []
        for _ in range(rounds):
            for kind in KINDS:
                forget(service)
                if kind.endswith("no superseded read"):
                    ranker.weights = dataclasses.replace(weights, superseded=0.0)
                clock = clock_of(service) if kind == "now" else None
                try:
                    latencies = await timed(service, tenant, queries(kind))
                finally:
                    ranker.weights = weights
                    if clock is not None:
                        clock.close()
                        superseded += clock.times.get("memory/superseded", [])
                runs[kind].append((statistics.median(latencies), percentile(latencies, 0.95)))
        now_p50 = statistics.median(p for p, _ in runs["now"])
        now_p95 = statistics.median(p for _, p in runs["now"])
        for kind in KINDS:
            p50 = statistics.median(p for p, _ in runs[kind])
            p95 = statistics.median(p for _, p in runs[kind])
            row = {
                "stored": size,
                "scope": scope,
                "read": kind,
                "queries": len(questions),
                "rounds": rounds,
                "p50_ms": round(p50, 1),
                "p95_ms": round(p95, 1),
                "p50_rounds_ms": [round(p, 1) for p, _ in runs[kind]],
                "p95_rounds_ms": [round(p, 1) for _, p in runs[kind]],
                "p50_ratio": round(p50 / now_p50, 2),
                "p95_ratio": round(p95 / now_p95, 2),
            }
            print(f"moments: {row}", file=sys.stderr)
            out.append(row)
        stages[scope] = round(statistics.median(superseded), 1) if superseded else 0.0
    return out, stages


def moments_report(
    rows: list[dict[str, Any]], run: dict[str, Any], stages: dict[str, float]
) -> str:
    table = "\n".join(
        f"| {r['scope']} | {r['read']} | {r['p50_ms']} | {r['p95_ms']} "
        f"| {r['p50_ratio']} | {r['p95_ratio']} "
        f"| {min(r['p95_rounds_ms'])} to {max(r['p95_rounds_ms'])} |"
        for r in rows
    )
    superseded = ", ".join(f"{scope} {ms} ms" for scope, ms in stages.items())
    first = rows[0]
    return f"""## Speed: reads at a moment

`bench/perf.py --moments-only` (also part of `--search-only`), {first["stored"]:,}
memories stored, the hybrid search of a user (1,000 memories, served by its scope's view)
and of the whole tenant (the graph), {first["queries"]} LoCoMo questions per round, `limit:
10`: now, at a record time (`asOf`) and at a valid time (`validAt`) in the middle of what
is searched (half of it seen), and now without the superseded read (`memory/superseded`,
`Weights.superseded = 0`). The reads take turns within each of {first["rounds"]} rounds;
each figure is the median over the rounds, the ratio to the current read's (issue 33:
p95 within 1.2x). {run["date"]}, commit {run["commit"]}, {run["machine"]}.

| scope | read | p50 ms | p95 ms | p50 ratio | p95 ratio | p95 across rounds |
|---|---|---|---|---|---|---|
{table}

`memory/superseded` (median wall time of the statement in the current search): {superseded}.
"""
