"""The Redis key layout and Redis failures. What a Redis Cluster needs from the layout:
every script's keys in one slot, sessions spread over slots. Which exceptions count as
Redis failing: redis-py's cluster client can trip over a connection a failover closed
under it (an AttributeError from inside redis-py), which must read as an unreachable hot
tier, never as an internal error; our own bugs must not."""

from __future__ import annotations

from dataclasses import astuple
from typing import Any

import pytest
from redis.asyncio.connection import Connection
from redis.crc import key_slot

from graphmem.errors import Unavailable
from graphmem.stores.redis.events import EventBus, EventKind
from graphmem.stores.redis.keys import (
    SESSIONS_PATTERN,
    call,
    is_redis_failure,
    session_keys,
    tenant_keys,
    tenant_of_sessions_key,
)
from graphmem.stores.redis.queue import STREAM, lane_key
from graphmem.stores.redis.working import task_key as working_key


def slots(*keys: str) -> set[int]:
    return {key_slot(k.encode()) for k in keys}


def test_a_sessions_keys_share_one_slot_and_a_tenants_indexes_another() -> None:
    assert len(slots(*astuple(session_keys("acme", "s-1")))) == 1
    assert len(slots(*astuple(tenant_keys("acme")))) == 1


def test_the_sessions_of_one_tenant_spread_over_the_slots() -> None:
    # 3 masters hold a third of the slots each: a tenant's sessions must reach them all
    thirds = {
        slot * 3 // 16384
        for slot in slots(*(session_keys("acme", f"s{n}").items for n in range(60)))
    }
    assert thirds == {0, 1, 2}
    assert len(slots(*(session_keys("acme", f"s{n}").items for n in range(60)))) > 50


def test_keys_of_different_tenants_or_sessions_never_coincide() -> None:
    # ids match [A-Za-z0-9_.@-], so "<tenant>:<session>" cannot be read two ways
    a = astuple(session_keys("a.b", "c")) + astuple(tenant_keys("a.b"))
    b = astuple(session_keys("a", "b.c")) + astuple(tenant_keys("a"))
    assert not set(a) & set(b)


def test_the_enrichment_queue_keys_share_one_slot() -> None:
    names = [
        STREAM,
        f"{STREAM}:parked",
        f"{STREAM}:workers",
        f"{STREAM}:waiting",
        f"{STREAM}:parked:n",
        f"{STREAM}:placed",
        f"{STREAM}:lanes",
        f"{STREAM}:lanes:n",
        lane_key("acme"),
        lane_key("globex.eu"),
    ]
    assert len(slots(*names)) == 1


def test_working_memory_is_a_slot_per_task() -> None:
    assert len(slots(*(working_key("acme", f"task-{n}") for n in range(30)))) > 25


def test_the_sessions_index_is_found_by_its_pattern_and_gives_its_tenant_back() -> None:
    import fnmatch

    key = tenant_keys("acme.eu").sessions
    assert fnmatch.fnmatchcase(key, SESSIONS_PATTERN)
    assert tenant_of_sessions_key(key) == "acme.eu"
    for other in astuple(session_keys("acme.eu", "sessions")):
        assert not fnmatch.fnmatchcase(other, SESSIONS_PATTERN), other


async def test_a_redis_client_failing_inside_its_connection_is_unavailable() -> None:
    import pytest
    from redis.asyncio.connection import Connection

    from graphmem.errors import Unavailable
    from graphmem.stores.redis.keys import call

    broken = Connection()  # never connected: its writer is None, as mid-reconnect

    async def inside_redis() -> None:
        await broken._send_packed_command([b"PING"])

    async def our_bug() -> None:
        raise AttributeError("a bug of ours stays a bug")

    with pytest.raises(Unavailable):
        await call(inside_redis)
    with pytest.raises(AttributeError):
        await call(our_bug)


async def write_on_a_closed_connection() -> None:
    # what a failover leaves a cluster node's connection as: never connected, or
    # disconnected while a command was on its way (its writer is None)
    await Connection()._send_packed_command([b"PING\r\n"])


async def our_bug() -> None:
    none: Any = None
    none.writelines([b"x"])


async def test_a_closed_connection_under_redis_py_is_a_redis_failure() -> None:
    with pytest.raises(AttributeError) as caught:
        await write_on_a_closed_connection()
    assert is_redis_failure(caught.value)
    with pytest.raises(Unavailable):
        await call(write_on_a_closed_connection)


async def test_our_own_attribute_error_is_not_a_redis_failure() -> None:
    with pytest.raises(AttributeError) as caught:
        await our_bug()
    assert not is_redis_failure(caught.value)
    with pytest.raises(AttributeError):
        await call(our_bug)


class FailingRedis:
    def __init__(self, fail: Any) -> None:
        self.fail = fail
        self.calls = 0

    async def spublish(self, channel: str, message: str) -> int:
        self.calls += 1
        await self.fail()
        return 0


async def test_an_event_lost_to_a_failover_does_not_fail_the_write() -> None:
    redis = FailingRedis(write_on_a_closed_connection)
    await EventBus(redis).publish("acme", EventKind.ADDED, id="m1")  # type: ignore[arg-type]
    assert redis.calls == 1


async def test_a_bug_in_publishing_is_not_hidden_as_a_redis_hiccup() -> None:
    redis = FailingRedis(our_bug)
    with pytest.raises(AttributeError):
        await EventBus(redis).publish("acme", EventKind.ADDED, id="m1")  # type: ignore[arg-type]
