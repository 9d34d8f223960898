"""The Redis key layout shared by the hot tier and the session index, and the mapping
of Redis failures to the service's errors.

A session's keys carry the tenant and the session as their hash tag, so in a Redis
Cluster the sessions of one tenant spread over the slots while every script that touches
one session stays inside one slot:

- ``gm:{<tenant>:<session>}:items``     hash: item id → item JSON
- ``gm:{<tenant>:<session>}:meta``      hash: ``tokens`` → token total of the items
- ``gm:{<tenant>:<session>}:config``    hash: per-session setting overrides (JSON)
- ``gm:{<tenant>:<session>}:emb``       hash: item id → cached embedding (base64 float32),
  and ``<id>:x`` → what else enrichment computed (sentence vectors, entities written)
- ``gm:{<tenant>:<session>}:lock``      string: the session's lock token (``locks.py``)
- ``gm:{<tenant>:<session>}:messages``  list: short-term messages (``conversation.py``)

The indexes that span a tenant's sessions carry the tenant alone as their hash tag (one
slot per tenant; they are small):

- ``gm:{<tenant>}:where``               hash: item id → session id (lookups by id)
- ``gm:{<tenant>}:sessions``            sorted set: session → time of its last write
- ``gm:{<tenant>}:over``                set: sessions that went over their token budget

A session and its tenant's indexes may live on different cluster nodes, so no script
writes both: the hot tier writes a session's items first and its index entries after,
and removes in the same order, so an index may name an item or session that is gone
(readers check) but never misses one that is there (``hot.py``, ``index.py``). Tenant
and session ids match ``[A-Za-z0-9_.@-]``, so ``<tenant>:<session>`` is unambiguous.

``docs/scaling.md`` has the whole key map, with the other stores' keys.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from graphmem.errors import GraphmemError, Unavailable

T = TypeVar("T")


@dataclass(frozen=True)
class SessionKeys:
    """One session's keys (all in the session's slot)."""

    items: str
    meta: str
    config: str
    emb: str
    lock: str
    messages: str


@dataclass(frozen=True)
class TenantKeys:
    """The indexes over a tenant's sessions (all in the tenant's slot)."""

    where: str
    sessions: str
    over: str


def session_keys(tenant: str, session_id: str) -> SessionKeys:
    base = f"gm:{{{tenant}:{session_id}}}"
    return SessionKeys(
        items=f"{base}:items",
        meta=f"{base}:meta",
        config=f"{base}:config",
        emb=f"{base}:emb",
        lock=f"{base}:lock",
        messages=f"{base}:messages",
    )


def tenant_keys(tenant: str) -> TenantKeys:
    base = f"gm:{{{tenant}}}"
    return TenantKeys(where=f"{base}:where", sessions=f"{base}:sessions", over=f"{base}:over")


#: what ``scan_iter`` matches to find the tenants with live sessions, and how a tenant
#: is read back from a match
SESSIONS_PATTERN = "gm:{*}:sessions"


def tenant_of_sessions_key(key: str) -> str:
    return key[len("gm:{") : -len("}:sessions")]


async def call(op: Callable[[], Awaitable[T]]) -> T:
    try:
        return await op()
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise Unavailable("the hot tier (Redis) is unreachable") from exc
    except RedisError as exc:
        raise GraphmemError("hot tier operation failed") from exc
    except (AttributeError, TypeError) as exc:
        if not _raised_in_redis(exc):
            raise
        raise Unavailable("the hot tier (Redis) is unreachable") from exc


def is_redis_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis failing rather than a bug of ours: an error Redis
    answered, a connection that broke, or redis-py's cluster client tripping over a
    connection a failover closed under it."""
    if isinstance(exc, RedisError | OSError):
        return True
    return isinstance(exc, AttributeError | TypeError) and _raised_in_redis(exc)


def _raised_in_redis(exc: BaseException) -> bool:
    # redis-py's cluster client can write to a connection that a failover's new slot map
    # closed meanwhile (its writer is None, or its transport's callbacks are): the
    # AttributeError or TypeError comes from within redis-py (or from asyncio's
    # transport under it) and means a dropped connection.
    tb = exc.__traceback__
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith("redis."):
            return True
        tb = tb.tb_next
    return False
