"""Hostile requests over every operation: no 5xx, no INTERNAL, no leak (the generator and
its oracle: tests/support/fuzzgen.py).

A fixed seed drives 2,000+ requests against the in-process app (GraphQL at /graphql, the
MCP tools at /mcp): every Query, Mutation and Subscription field of schema.graphql, every
MCP tool (the tier tools and the memory-server tools) and raw-body attacks, each at least
once, then a random stream. The bench
(``bench/fuzz.py``) runs the same generator for 10,000+ against a real ``graphmem serve``.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import Api
from tests.support.fuzzgen import Generator, format_failures, run

SEED = 20_260_101
COUNT = 2_000
#: the MCP transport checks the Host header (DNS-rebinding protection): a loopback name
BASE = "http://127.0.0.1:8000"


@pytest.mark.production_waits  # each request must answer within the run's 20 s
async def test_fuzz_every_operation(api: Api) -> None:
    gen = Generator(SEED)
    tenants = list(api.keys)
    keys = {"a": api.keys[tenants[0]], "b": api.keys[tenants[1]]}
    started = time.perf_counter()
    summary = await run(api.client, BASE, keys, gen, COUNT, first=gen.operations)
    elapsed = time.perf_counter() - started
    print(
        f"{summary.total} requests in {elapsed:.1f} s; status {dict(summary.per_status)}; "
        f"codes {dict(summary.per_code.most_common(12))}"
    )
    assert summary.total >= COUNT
    assert set(summary.per_op) == set(gen.operations), set(gen.operations) - set(summary.per_op)
    assert summary.failure_count == 0, format_failures(summary)
