"""The enrichment queue: a Redis Stream of write-behind jobs with one consumer group, so
that any number of ``graphmem worker`` processes on any machines share the work.

- ``gm:enrich``          stream: one entry per added batch (tenant, session, item ids)
- ``gm:enrich:parked``   stream: jobs that failed ``max_attempts`` times, with the error
- ``gm:enrich:workers``  sorted set: each running worker, scored by its last heartbeat (ms)

A job is acknowledged and deleted once its items are in the graph with their vectors, so
the stream holds exactly the work not yet done (its length is the backlog). A worker that
dies leaves its jobs pending; another takes them over with ``XAUTOCLAIM`` once they have
been idle for a while. A failed job is added again with its attempt count, and parked
when that count reaches the limit, so one poison job never blocks the stream.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from ..models import EnrichmentJob, QueueStats
from .keys import call

STREAM = "gm:enrich"
PARKED = "gm:enrich:parked"
GROUP = "enrichers"


def _job(entry: Any, fields: dict[str, str], delivered: int = 1) -> EnrichmentJob:
    return EnrichmentJob(
        entry=str(entry),
        tenant=fields["t"],
        session_id=fields["s"],
        ids=json.loads(fields["ids"]),
        attempt=int(fields.get("a", "0")) + delivered,
    )


def _fields(tenant: str, session_id: str, ids: Sequence[str]) -> dict[Any, Any]:
    """An entry's fields, as ``_job`` reads them back."""
    return {"t": tenant, "s": session_id, "ids": json.dumps(list(ids))}


class RedisEnrichmentQueue:
    def __init__(self, redis: Redis, stream: str = STREAM) -> None:
        self._redis = redis
        self.stream = stream
        self.parked_stream = f"{stream}:parked"
        self.workers_key = f"{stream}:workers"
        self._group_ready = False

    async def ensure(self) -> None:
        """Create the stream and its consumer group (idempotent)."""
        if self._group_ready:
            return

        async def op() -> None:
            try:
                await self._redis.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

        await call(op)
        self._group_ready = True

    async def add(self, tenant: str, session_id: str, ids: Sequence[str]) -> None:
        fields = _fields(tenant, session_id, ids)
        await call(lambda: cast(Awaitable[Any], self._redis.xadd(self.stream, fields)))

    async def beat(self, consumer: str, alive: bool = True) -> None:
        """A worker's heartbeat (``alive=False`` when it stops). Workers long silent are
        dropped from the set on the way."""
        now = int(time.time() * 1000)

        async def op() -> None:
            async with self._redis.pipeline(transaction=False) as pipe:
                if alive:
                    pipe.zadd(self.workers_key, {consumer: now})
                else:
                    pipe.zrem(self.workers_key, consumer)
                pipe.zremrangebyscore(self.workers_key, "-inf", now - 3_600_000)
                await pipe.execute()

        await call(op)

    async def workers(self, within_seconds: float) -> int:
        """How many workers sent a heartbeat in the last ``within_seconds``."""
        since = int((time.time() - within_seconds) * 1000)
        return int(
            await call(
                lambda: cast(Awaitable[Any], self._redis.zcount(self.workers_key, since, "+inf"))
            )
        )

    async def _grouped(self, op: Callable[[], Awaitable[Any]]) -> Any:
        """Run a group command, creating the group again if Redis lost it (a flush, a
        restore without the stream)."""
        await self.ensure()

        async def once() -> Any:
            try:
                return await op()
            except ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
            self._group_ready = False
            await self.ensure()
            return await op()

        return await call(once)

    async def read(self, consumer: str, count: int, block_ms: int) -> list[EnrichmentJob]:
        """New jobs for this consumer, waiting up to ``block_ms`` for the first."""
        reply = await self._grouped(
            lambda: self._redis.xreadgroup(
                GROUP, consumer, {self.stream: ">"}, count=count, block=block_ms
            )
        )
        return await self._jobs([(e, f) for _, entries in reply or [] for e, f in entries if f])

    async def reclaim(self, consumer: str, idle_ms: int, count: int) -> list[EnrichmentJob]:
        """Jobs another consumer took and left idle for ``idle_ms`` (it died or hangs)."""
        reply = await self._grouped(
            lambda: self._redis.xautoclaim(
                self.stream, GROUP, consumer, idle_ms, start_id="0-0", count=count
            )
        )
        claimed = [(e, f) for e, f in reply[1] if f]
        if not claimed:
            return []
        details = await call(
            lambda: cast(
                Awaitable[Any],
                self._redis.xpending_range(
                    self.stream, GROUP, min=claimed[0][0], max=claimed[-1][0], count=len(claimed)
                ),
            )
        )
        delivered = {str(d["message_id"]): int(d["times_delivered"]) for d in details}
        return await self._jobs(claimed, delivered)

    async def _jobs(
        self, entries: list[tuple[Any, dict[str, str]]], delivered: dict[str, int] | None = None
    ) -> list[EnrichmentJob]:
        """Entries as jobs; one that does not parse (written by hand, or by another
        version) is parked at once instead of failing every read after it."""
        jobs: list[EnrichmentJob] = []
        for entry, fields in entries:
            try:
                jobs.append(_job(entry, fields, (delivered or {}).get(str(entry), 1)))
            except (KeyError, TypeError, ValueError) as exc:
                bad = EnrichmentJob(entry=str(entry), tenant="", session_id="", ids=[])
                reason = f"malformed entry: {type(exc).__name__} {exc}"
                await call(lambda: self._park(bad, fields, reason))  # noqa: B023 (awaited here)
        return jobs

    async def ack(self, jobs: Sequence[EnrichmentJob]) -> None:
        if jobs:
            await call(lambda: self._settle([j.entry for j in jobs]))

    async def _settle(
        self, entries: Sequence[str], moved_to: tuple[str, dict[Any, Any]] | None = None
    ) -> None:
        """Acknowledge and delete ``entries``, in the same transaction as adding their
        replacement (``moved_to``: a stream and its fields) when there is one, so a job is
        never both done and re-queued, nor lost between the two."""
        async with self._redis.pipeline(transaction=True) as pipe:
            if moved_to is not None:
                pipe.xadd(*moved_to)
            pipe.xack(self.stream, GROUP, *entries)
            pipe.xdel(self.stream, *entries)
            await pipe.execute()

    async def retry(self, job: EnrichmentJob) -> None:
        """Put a failed job back at the end of the stream with its attempt count."""
        fields = _fields(job.tenant, job.session_id, job.ids) | {"a": str(job.attempt)}
        await call(lambda: self._settle([job.entry], (self.stream, fields)))

    async def park(self, job: EnrichmentJob, error: str) -> None:
        fields = _fields(job.tenant, job.session_id, job.ids)
        await call(lambda: self._park(job, fields, error))

    async def _park(self, job: EnrichmentJob, original: dict[str, str], error: str) -> None:
        fields: dict[Any, Any] = {
            **{k: str(v)[:2000] for k, v in original.items()},
            "attempts": str(job.attempt),
            "error": error[:2000],
            "at": str(time.time()),
        }
        await self._settle([job.entry], (self.parked_stream, fields))

    async def parked(self, count: int = 100) -> list[dict[str, str]]:
        """The parked jobs, newest first, with their error."""
        rows = await call(
            lambda: cast(Awaitable[Any], self._redis.xrevrange(self.parked_stream, count=count))
        )
        return [{"entry": str(e), **f} for e, f in rows]

    async def stats(self) -> QueueStats:
        async def op() -> QueueStats:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.xlen(self.stream)
                pipe.xpending(self.stream, GROUP)
                pipe.xlen(self.parked_stream)
                pipe.xrange(self.stream, count=1)
                backlog, pending, parked, first = await pipe.execute()
            oldest = 0.0
            if first:
                millis = int(str(first[0][0]).split("-")[0])
                oldest = max(0.0, time.time() - millis / 1000)
            return QueueStats(
                backlog=int(backlog),
                pending=int(pending["pending"]),
                parked=int(parked),
                oldest_seconds=round(oldest, 3),
            )

        result: QueueStats = await self._grouped(op)
        return result
