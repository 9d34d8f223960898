"""Moving Redis keys from the older layout: which names move, where to, and which stay."""

from __future__ import annotations

from dataclasses import astuple

from graphmem.stores.redis.keys import session_keys, tenant_keys
from graphmem.stores.redis.layout import new_name
from graphmem.stores.redis.queue import STREAM
from graphmem.stores.redis.working import task_key as working_key


def test_old_redis_keys_with_a_trailing_newline_are_not_moved() -> None:
    assert new_name("gm:{t}:s:s1:items") == "gm:{t:s1}:items"
    assert new_name("gm:{t}:s:s1:items\n") is None
    assert new_name("gm:{t}:wm:task\n") is None
    assert new_name("gm:enrich\n") is None


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
