"""The Redis key layout shared by the hot tier and the session index, and the mapping
of Redis failures to the service's errors.

Keys (every one carries the tenant as its hash tag, so the scripts that touch a
session's keys and the tenant's indexes together stay in one Redis Cluster slot):

- ``gm:{<tenant>}:s:<session>:items``   hash: item id → item JSON
- ``gm:{<tenant>}:s:<session>:meta``    hash: ``tokens`` → token total of the items
- ``gm:{<tenant>}:s:<session>:config``  hash: per-session setting overrides (JSON)
- ``gm:{<tenant>}:s:<session>:emb``     hash: item id → cached embedding (base64 float32),
  and ``<id>:x`` → what else enrichment computed (sentence vectors, entities written)
- ``gm:{<tenant>}:s:<session>:lock``    string: the session's lock token (``locks.py``)
- ``gm:{<tenant>}:where``               hash: item id → session id (lookups by id)
- ``gm:{<tenant>}:sessions``            sorted set: session → time of its last write
- ``gm:{<tenant>}:over``                set: sessions that went over their token budget
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ...errors import GraphmemError, Unavailable

T = TypeVar("T")


def session_keys(tenant: str, session_id: str) -> list[str]:
    """items, meta, where, sessions, config, emb: the order the Lua scripts expect."""
    tag = f"gm:{{{tenant}}}"
    session = f"{tag}:s:{session_id}"
    return [
        f"{session}:items",
        f"{session}:meta",
        f"{tag}:where",
        f"{tag}:sessions",
        f"{session}:config",
        f"{session}:emb",
    ]


def over_key(tenant: str) -> str:
    return f"gm:{{{tenant}}}:over"


async def call(op: Callable[[], Awaitable[T]]) -> T:
    try:
        return await op()
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise Unavailable("the hot tier (Redis) is unreachable") from exc
    except RedisError as exc:
        raise GraphmemError("hot tier operation failed") from exc
