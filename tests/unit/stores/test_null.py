"""A service built without Redis events: capabilities publish into nothing, and the
change feed is refused with UNAVAILABLE rather than answering an empty stream."""

from __future__ import annotations

import pytest

from graphmem.domain.models import EventKind
from graphmem.errors import Unavailable
from graphmem.stores.null import NullBus
from tests.support.memory import fake_memory

pytestmark = pytest.mark.asyncio


async def test_publishing_into_no_feed_does_nothing() -> None:
    bus = NullBus()
    await bus.publish("t", EventKind.ADDED, itemIds=["m1"])
    with pytest.raises(Unavailable):
        bus.subscribe("t")


async def test_a_service_without_events_refuses_its_change_feed_but_still_adds() -> None:
    fakes = fake_memory()
    await fakes.add("a memory while nobody listens")
    with pytest.raises(Unavailable, match="needs Redis events"):
        fakes.memory.subscribe("tenant-a")
