"""Admission control per tenant: cost per second, expensive fields at once, fair shares, and
quotas, counted in Redis so every replica enforces one limit."""

from __future__ import annotations

import asyncio
import time

import pytest

from graphmem.errors import QuotaExceeded
from graphmem.memory.builder import MemoryBuilder
from tests.conftest import Stack, new_tenant
from tests.support.apis import codes, limited_api
from tests.support.documents import ADD, SEARCH


async def test_requests_per_second_are_limited_per_tenant(stack: Stack) -> None:
    async with limited_api(stack, rate_limit_per_second=5) as api:
        a, b = list(api.keys)
        bodies = [await api.gql('{ hot(sessionId: "s") { id } }', tenant=a) for _ in range(30)]
        limited = [x for x in bodies if codes([x]) == ["RATE_LIMITED"]]
        assert limited, codes(bodies)
        assert 0 < limited[0]["errors"][0]["extensions"]["retryAfterMs"] <= 1000
        # ... while the other tenant is served
        assert "errors" not in await api.gql('{ hot(sessionId: "s") { id } }', tenant=b)


async def test_expensive_operations_hold_a_slot(stack: Stack) -> None:
    async with limited_api(stack, max_concurrent_expensive=1) as api:
        a, b = list(api.keys)
        memory = api.client._transport.app.state.service  # type: ignore[attr-defined]
        async with memory.admission.expensive(a):  # one search of A's is running
            busy = await api.gql(SEARCH, {"q": "anything"}, tenant=a)
            assert codes([busy]) == ["RATE_LIMITED"]
            assert "errors" not in await api.gql(SEARCH, {"q": "anything"}, tenant=b)
            # cheap operations are not held back
            assert "errors" not in await api.gql('{ hot(sessionId: "s") { id } }', tenant=a)
        assert "errors" not in await api.gql(SEARCH, {"q": "anything"}, tenant=a)


async def test_quota_of_memories_per_tenant(stack: Stack) -> None:
    async with limited_api(stack, quota_memories=3) as api:
        a, b = list(api.keys)
        ids = []
        for n in range(3):
            body = await api.data(ADD, {"input": {"sessionId": "q", "content": f"m{n}"}}, tenant=a)
            ids.append(body["addMemory"]["id"])
        over = await api.gql(ADD, {"input": {"sessionId": "q", "content": "m3"}}, tenant=a)
        assert codes([over]) == ["QUOTA_EXCEEDED"]
        assert over["errors"][0]["extensions"]["memories"] == 3
        assert "errors" not in await api.gql(
            ADD, {"input": {"sessionId": "q", "content": "b0"}}, tenant=b
        )
        await api.data("mutation($i: ID!) { forget(itemId: $i) }", {"i": ids[0]}, tenant=a)
        again = await api.gql(ADD, {"input": {"sessionId": "q", "content": "m3"}}, tenant=a)
        assert "errors" not in again, again


async def test_a_tenant_at_its_quota_is_counted_exactly_one_count_at_a_time(
    stack: Stack,
) -> None:
    """The exact count reads the whole tenant; twenty refused writes at once run one
    count, not twenty (each over every replica's Redis and the graph)."""
    service = MemoryBuilder.from_settings(stack.settings(quota_memories=1)).build()
    await service.migrate()
    try:
        tenant = new_tenant()
        await service.ingest.add(tenant, {"session_id": "q", "content": "the one memory"})
        exact = service.admission.exact_usage
        counts = 0

        async def slow_count(t: str) -> tuple[int, int]:
            nonlocal counts
            counts += 1
            await asyncio.sleep(0.3)  # a large tenant's count takes a while
            return await exact(t)

        service.admission.exact_usage = slow_count
        refused = await asyncio.gather(
            *(service.admission.reserve(tenant, 1, 10) for _ in range(20)),
            return_exceptions=True,
        )
        assert all(isinstance(r, QuotaExceeded) for r in refused), refused
        assert counts == 1
        # the count is over: the next refusal counts again (a forget gives room at once)
        with pytest.raises(QuotaExceeded):
            await service.admission.reserve(tenant, 1, 10)
        assert counts == 2
    finally:
        await service.close()


FRAGMENT_SEARCH = '{ ... on Query { search(query: "anything", limit: 3) { score } } }'
SPREAD_SEARCH = (
    'query { ...S } fragment S on Query { search(query: "anything", limit: 3) { score } }'
)


def aliased_searches(n: int) -> str:
    fields = " ".join(f's{i}: search(query: "q{i}", limit: 1) {{ score }}' for i in range(n))
    return "{ " + fields + " }"


async def test_expensive_fields_are_counted_however_they_are_wrapped(stack: Stack) -> None:
    async with limited_api(stack, max_concurrent_expensive=1) as api:
        a, _ = list(api.keys)
        memory = api.app.state.service
        async with memory.admission.expensive(a):
            for query in (FRAGMENT_SEARCH, SPREAD_SEARCH):
                assert codes([await api.gql(query, tenant=a)]) == ["RATE_LIMITED"], query
        for query in (FRAGMENT_SEARCH, SPREAD_SEARCH):
            assert "errors" not in await api.gql(query, tenant=a), query


async def test_aliased_searches_each_count_and_past_the_limit_are_refused(stack: Stack) -> None:
    async with limited_api(stack, max_concurrent_expensive=4, rate_limit_per_second=0) as api:
        a, _ = list(api.keys)
        over = await api.gql(aliased_searches(15), tenant=a)
        assert codes([over]) == ["BAD_INPUT"]
        assert over["errors"][0]["extensions"]["reason"] == "TOO_COSTLY"
        assert "15 expensive fields" in over["errors"][0]["message"]
        memory = api.app.state.service
        async with memory.admission.expensive(a, 2):  # two of the four slots are held
            assert codes([await api.gql(aliased_searches(3), tenant=a)]) == ["RATE_LIMITED"]
            assert "errors" not in await api.gql(aliased_searches(2), tenant=a)
    # cost units: each search costs 10 more than the operation
    async with limited_api(stack, rate_limit_per_second=25) as api:
        a, b = list(api.keys)
        first = await api.gql(aliased_searches(2), tenant=a)  # 21 units
        second = await api.gql(aliased_searches(1), tenant=a)  # 11 more: past 25
        if codes([second]) != ["RATE_LIMITED"]:  # a second boundary fell between them
            second = await api.gql(aliased_searches(3), tenant=a)
        assert "errors" not in first
        assert codes([second]) == ["RATE_LIMITED"]
        assert "errors" not in await api.gql(aliased_searches(2), tenant=b)


async def test_invalid_requests_are_counted(stack: Stack) -> None:
    async with limited_api(stack, rate_limit_per_second=5) as api:
        a, b = list(api.keys)
        bodies = [await api.gql("{ nosuchfield }", tenant=a) for _ in range(12)]
        bodies += [await api.gql("{ broken", tenant=a) for _ in range(12)]
        assert "RATE_LIMITED" in codes(bodies), codes(bodies)
        assert "errors" not in await api.gql('{ hot(sessionId: "s") { id } }', tenant=b)


async def test_a_flooding_tenant_waits_its_turn_while_another_is_served(stack: Stack) -> None:
    """Tenant a sends 40 requests at once into a process of 2 slots (1 per tenant while
    others are active, 0.1 s of running time per second between them): a's are held
    back and the excess refused with 429 and Retry-After, b's all answer."""
    async with limited_api(
        stack,
        rate_limit_per_second=0,
        fair_slots=2,
        fair_tenant_slots=1,
        fair_capacity=0.1,
        fair_max_wait_seconds=0.3,
        fair_max_queued=8,
    ) as api:
        a, b = list(api.keys)
        assert "errors" not in await api.gql('{ hot(sessionId: "s") { id } }', tenant=b)
        query = '{ hot(sessionId: "s") { id } }'
        flood = [api.raw(query, tenant=a) for _ in range(40)]
        light = [api.raw(query, tenant=b) for _ in range(5)]
        answers = await asyncio.gather(*flood, *light)
        mine, theirs = answers[:40], answers[40:]
        assert all(r.status_code == 200 and "errors" not in r.json() for r in theirs)
        refused = [r for r in mine if r.status_code == 429]
        assert refused, [r.status_code for r in mine]
        assert all(r.json()["errors"][0]["extensions"]["code"] == "RATE_LIMITED" for r in refused)
        assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
        assert all(r.status_code in (200, 429) for r in mine)


async def test_a_refusal_is_answered_when_its_retry_is_due(stack: Stack) -> None:
    """A client that does not wait cannot turn refusals into a flood: each 429 comes
    when its retryAfterMs has passed (at most the longest wait for a turn, 1 s)."""
    async with limited_api(stack, rate_limit_per_second=2) as api:
        a, _ = list(api.keys)
        query = '{ hot(sessionId: "s") { id } }'
        held = []
        for _ in range(12):
            started = time.monotonic()
            response = await api.raw(query, tenant=a)
            took = time.monotonic() - started
            if response.status_code == 429:
                retry = response.json()["errors"][0]["extensions"]["retryAfterMs"] / 1000
                held.append((took, retry))
        assert held, "no request was refused"
        for took, retry in held:
            assert min(retry, 1.0) - 0.05 <= took <= 1.5, held


async def test_an_add_is_charged_for_the_work_it_leaves_to_the_worker(stack: Stack) -> None:
    """A memory costs the enrichment worker and Neo4j after its add has answered; charged
    to the adding tenant's share at the add, it holds that tenant's next adds back while
    another tenant is active (past the longest wait: refused, and nothing stored), and
    the other tenant is served. Without the charge, the same adds all pass."""
    content = "a memory about the budget and the plans " * 30  # 1.2 KB
    query = '{ hot(sessionId: "s") { id } }'
    for per_kb, held in ((0.5, True), (0.0, False)):
        async with limited_api(
            stack, rate_limit_per_second=0, fair_later_seconds_per_kb=per_kb
        ) as api:
            a, b = list(api.keys)
            assert "errors" not in await api.gql(query, tenant=b)  # two tenants are active
            add = {"input": {"sessionId": "s1", "content": content}}
            assert "errors" not in await api.gql(ADD, add, tenant=a)
            # b active again: its first request may be past the 2 s window by now on a
            # loaded machine (a fresh API's first add can take that long)
            assert "errors" not in await api.gql(query, tenant=b)
            bodies = await asyncio.gather(*(api.gql(ADD, add, tenant=a) for _ in range(4)))
            refused = codes(bodies).count("RATE_LIMITED")
            assert (refused > 0) == held, codes(bodies)
            assert set(codes(bodies)) <= {None, "RATE_LIMITED"}, bodies
            assert "errors" not in await api.gql(query, tenant=b)
            hot = await api.gql('{ hot(sessionId: "s1") { id } }', tenant=a)
            assert len(hot["data"]["hot"]) == 5 - refused  # a refused add stored nothing
