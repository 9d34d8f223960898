"""Which exceptions count as Redis failing: redis-py's cluster client can trip over a
connection a failover closed under it (an AttributeError from inside redis-py), which
must read as an unreachable hot tier, never as an internal error; our own bugs must not."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio.connection import Connection

from graphmem.errors import Unavailable
from graphmem.stores.redis.events import EventBus, EventKind
from graphmem.stores.redis.keys import call, is_redis_failure


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
