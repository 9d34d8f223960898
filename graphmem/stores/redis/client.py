"""One Redis client for every Redis store: a single server's, or a Redis Cluster's.

The stores are written against the commands both clients share (single-slot scripts,
pipelines within one slot, sharded pub/sub), so they take either as a ``Redis``.
"""

from __future__ import annotations

from typing import cast

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError


def connect(url: str, cluster: bool = False, decode: bool = True) -> Redis:
    """A client for ``url``: with ``cluster``, any node of the cluster (the client reads
    the slot map from it and follows MOVED and ASK redirections, such as after a
    failover).

    Every script the stores run is idempotent (a put rewrites the same document and
    recomputes the token delta), so retrying after a dropped connection cannot count
    twice. ``decode=False`` answers bytes (for ``DUMP``, which is binary)."""
    if cluster:
        client = RedisCluster.from_url(
            url,
            decode_responses=decode,
            socket_timeout=5.0,
            socket_connect_timeout=5.0,
            retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=6),
        )
        # The cluster client is not a subclass of Redis, but implements the same commands
        # for keys in one slot, which is all the stores send.
        return cast(Redis, client)
    return Redis.from_url(
        url,
        decode_responses=decode,
        socket_timeout=5.0,
        socket_connect_timeout=5.0,
        retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=3),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
