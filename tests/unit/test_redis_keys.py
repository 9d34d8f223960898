"""The Redis key layout: what a Redis Cluster needs from it (every script's keys in one
slot, sessions spread over slots) and the move from the older layout."""

from __future__ import annotations

from dataclasses import astuple

from redis.crc import key_slot

from graphmem.stores.redis.keys import (
    SESSIONS_PATTERN,
    session_keys,
    tenant_keys,
    tenant_of_sessions_key,
)
from graphmem.stores.redis.layout import new_name
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


def test_layout_one_names_move_to_layout_two_and_layout_two_names_stay() -> None:
    assert new_name("gm:{acme}:s:chat-1:items") == session_keys("acme", "chat-1").items
    assert new_name("gm:{acme}:s:chat-1:messages") == session_keys("acme", "chat-1").messages
    assert new_name("gm:{acme}:wm:task-9") == working_key("acme", "task-9")
    assert new_name("gm:enrich") == STREAM
    assert new_name("gm:enrich:parked:n") == f"{STREAM}:parked:n"
    current = [
        *astuple(session_keys("acme", "chat-1")),
        *astuple(tenant_keys("acme")),
        working_key("acme", "task-9"),
        STREAM,
        f"{STREAM}:parked",
        "gm:{acme}:ver:clock",
        "gm:{acme}:events",
        "gm:lease:maintenance",
        "gm:bookmarks",
    ]
    for key in current:
        assert new_name(key) is None, key


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
