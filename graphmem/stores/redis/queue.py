"""The enrichment queue: a Redis Stream of write-behind jobs with one consumer group, so
that any number of ``graphmem worker`` processes on any machines share the work.

- ``gm:{enrich}``          stream: one entry per added batch (tenant, session, item ids)
- ``gm:{enrich}:parked``   stream: jobs that failed ``max_attempts`` times, with the error
- ``gm:{enrich}:workers``  sorted set: each running worker, scored by its last heartbeat
  (Redis's clock, in ms: workers and API replicas on other machines agree on it)
- ``gm:{enrich}:waiting``  hash: per tenant, its items on the stream (changed atomically with
  the stream, so a tenant can follow its own backlog without seeing anyone else's)
- ``gm:{enrich}:parked:n`` hash: per tenant, its items in parked jobs
- ``gm:{enrich}:placed``   hash: per tenant, the items of its jobs on the stream
- ``gm:{enrich}:lane:<tenant>`` list: the tenant's jobs waiting for room on the stream
- ``gm:{enrich}:lanes``    sorted set: the tenants with a lane, scored by when its first
  job was queued (ms); ``gm:{enrich}:lanes:n``: the jobs in every lane

A tenant has at most ``tenant_items`` items on the stream at a time (a job larger than
that goes alone): its other jobs wait in its lane, in order, and each settled job makes
room for the next ones (the settle script moves them, atomically). So the stream never
holds more than that of one tenant ahead of another tenant's job: a tenant adding a
million memories delays the others by one share, not by its backlog, while a tenant alone
keeps enough on the stream for the workers' batches.

A job is acknowledged and deleted once its items are in the graph with their vectors, so
the stream and the lanes hold exactly the work not yet done (the backlog). A worker that
dies leaves its jobs pending; another takes them over with ``XAUTOCLAIM`` once they have
been idle for a while. A worker that lives refreshes its claim on the jobs it holds
(``touch``), so a slow job is not taken over while it is worked on. A failed job is
added again with its attempt count, and parked when that count reaches the limit, so
one poison job never blocks the stream. The Lua scripts that make each of these changes
in one step are in ``queue_scripts.py``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from graphmem.stores.models import EnrichmentJob, QueueStats
from graphmem.stores.redis.keys import call
from graphmem.stores.redis.queue_scripts import ADD, BEAT, SETTLE, TOUCH, UNSTICK, WORKERS

# One hash tag for the stream and its counters: the scripts touch them together, so in a
# Redis Cluster they share a slot (and a node; docs/scaling.md).
STREAM = "gm:{enrich}"
log = logging.getLogger("graphmem.worker")
PARKED = "gm:{enrich}:parked"
GROUP = "enrichers"


#: items of one tenant on the stream at a time, by default (``RedisEnrichmentQueue``)
TENANT_ITEMS = 1024


def lane_key(tenant: str, stream: str = STREAM) -> str:
    """Where a tenant's jobs wait for room on the stream (in the stream's slot)."""
    return f"{stream}:lane:{tenant}"


def _job(entry: Any, fields: dict[str, str], delivered: int = 1) -> EnrichmentJob:
    return EnrichmentJob(
        entry=str(entry),
        tenant=fields["t"],
        session_id=fields["s"],
        ids=json.loads(fields["ids"]),
        attempt=int(fields.get("a", "0")) + delivered,
        counted=fields.get("c") == "1",
        placed=fields.get("p") == "1",
    )


def _fields(
    tenant: str, session_id: str, ids: Sequence[str], counted: bool = True, placed: bool = True
) -> dict[Any, Any]:
    """An entry's fields, as ``_job`` reads them back. ``c`` marks a job whose items are
    in the tenant's waiting count, ``p`` one whose items are in its placed count (a job
    queued before the counts existed is in neither)."""
    out = {"t": tenant, "s": session_id, "ids": json.dumps(list(ids))}
    return out | ({"c": "1"} if counted else {}) | ({"p": "1"} if placed else {})


class RedisEnrichmentQueue:
    def __init__(
        self, redis: Redis, stream: str = STREAM, tenant_items: int = TENANT_ITEMS
    ) -> None:
        self._redis = redis
        self.stream = stream
        #: items of one tenant on the stream at a time; its other jobs wait in its lane
        self.tenant_items = tenant_items
        self.parked_stream = f"{stream}:parked"
        self.workers_key = f"{stream}:workers"
        self.waiting_key = f"{stream}:waiting"
        self.parked_count_key = f"{stream}:parked:n"
        self.placed_key = f"{stream}:placed"
        self.lanes_key = f"{stream}:lanes"
        self.lanes_count_key = f"{stream}:lanes:n"
        self._settle_script = redis.register_script(SETTLE)
        self._add_script = redis.register_script(ADD)
        self._unstick_script = redis.register_script(UNSTICK)
        self._touch_script = redis.register_script(TOUCH)
        self._beat_script = redis.register_script(BEAT)
        self._workers_script = redis.register_script(WORKERS)
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
        """Queue a job: on the stream while the tenant's share has room, else at the end
        of its lane."""
        fields = _fields(tenant, session_id, ids)

        flat = [x for kv in fields.items() for x in kv]
        keys = [
            self.stream,
            self.waiting_key,
            self.placed_key,
            self.lanes_key,
            self.lanes_count_key,
            lane_key(tenant, self.stream),
        ]
        await call(
            lambda: self._add_script(keys=keys, args=[tenant, len(ids), self.tenant_items, *flat])
        )

    async def tenant_backlog(self, tenant: str) -> tuple[int, int]:
        """A tenant's items waiting on the stream, and its items in parked jobs."""

        async def op() -> list[Any]:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hget(self.waiting_key, tenant)
                pipe.hget(self.parked_count_key, tenant)
                return await pipe.execute()

        waiting, parked = await call(op)
        return max(0, int(waiting or 0)), max(0, int(parked or 0))

    async def beat(self, consumer: str, alive: bool = True) -> None:
        """A worker's heartbeat (``alive=False`` when it stops). Workers silent for an
        hour are dropped from the set on the way."""
        await call(lambda: self._beat_script(keys=[self.workers_key], args=[consumer, int(alive)]))

    async def workers(self, within_seconds: float) -> int:
        """How many workers sent a heartbeat in the last ``within_seconds``."""
        found = await call(
            lambda: self._workers_script(keys=[self.workers_key], args=[int(within_seconds * 1000)])
        )
        return int(found)

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
        entries = [(e, f) for _, entries in reply or [] for e, f in entries if f]
        if not entries:
            await self._unstick()
        return await self._jobs(entries)

    async def _unstick(self, count: int = 100) -> None:
        """Move lanes up when the stream is empty (see ``queue_scripts.UNSTICK``)."""
        tenants = await call(
            lambda: cast(Awaitable[Any], self._redis.zrange(self.lanes_key, 0, count - 1))
        )
        if not tenants:
            return
        names = [t.decode() if isinstance(t, bytes) else str(t) for t in tenants]
        keys = [self.stream, self.placed_key, self.lanes_key, self.lanes_count_key]
        keys += [lane_key(t, self.stream) for t in names]
        await call(lambda: self._unstick_script(keys=keys, args=[self.tenant_items, *names]))

    async def touch(self, consumer: str, jobs: Sequence[EnrichmentJob]) -> int:
        """Reset the idle time of the jobs this consumer still holds, so that no other
        consumer takes them over while it works on them; how many it still holds."""
        if not jobs:
            return 0
        entries = [j.entry for j in jobs]
        touched = await self._grouped(
            lambda: self._touch_script(keys=[self.stream], args=[GROUP, consumer, *entries])
        )
        return int(touched)

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
                log.error("enrichment entry %s parked: %s", entry, reason)
                await call(lambda: self._park(bad, fields, reason))  # noqa: B023 (awaited here)
        return jobs

    async def ack(self, jobs: Sequence[EnrichmentJob]) -> None:
        if jobs:
            await call(lambda: self._settle(jobs))

    async def _settle(
        self,
        jobs: Sequence[EnrichmentJob],
        moved_to: tuple[str, dict[Any, Any]] | None = None,
    ) -> None:
        """Acknowledge and delete ``jobs``, in one script with adding their replacement
        (``moved_to``: a stream and its fields) when there is one and with updating the
        tenants' counts, so a job is never both done and re-queued, nor lost between the
        two, and the counts always match the streams. A job another worker took over and
        settled already is left alone (its acknowledgement fails), so nothing is counted
        twice."""
        mode = "ack" if moved_to is None else "retry" if moved_to[0] == self.stream else "park"
        fields = [x for kv in (moved_to[1] if moved_to else {}).items() for x in kv]
        quads = [
            x
            for j in jobs
            for x in (
                j.entry,
                j.tenant,
                len(j.ids) if j.counted else 0,
                len(j.ids) if j.placed else 0,
            )
        ]
        # a retried job keeps its place: only a job that leaves the stream makes room
        tenants = sorted({j.tenant for j in jobs if j.tenant}) if mode != "retry" else []
        await self._settle_script(
            keys=[
                self.stream,
                self.waiting_key,
                self.parked_count_key,
                self.parked_stream,
                self.placed_key,
                self.lanes_key,
                self.lanes_count_key,
                *(lane_key(t, self.stream) for t in tenants),
            ],
            args=[
                GROUP,
                mode,
                self.tenant_items,
                len(fields) // 2,
                *fields,
                len(jobs),
                *quads,
                *tenants,
            ],
        )

    async def retry(self, job: EnrichmentJob) -> None:
        """Put a failed job back at the end of the stream with its attempt count."""
        fields = _fields(job.tenant, job.session_id, job.ids, job.counted, job.placed)
        fields |= {"a": str(job.attempt)}
        await call(lambda: self._settle([job], (self.stream, fields)))

    async def park(self, job: EnrichmentJob, error: str) -> None:
        fields = _fields(job.tenant, job.session_id, job.ids, job.counted, job.placed)
        await call(lambda: self._park(job, fields, error))

    async def _park(self, job: EnrichmentJob, original: dict[str, str], error: str) -> None:
        fields: dict[Any, Any] = {
            **{k: str(v)[:2000] for k, v in original.items()},
            "attempts": str(job.attempt),
            "error": error[:2000],
            "at": str(time.time()),
        }
        await self._settle([job], (self.parked_stream, fields))

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
                pipe.get(self.lanes_count_key)
                pipe.zrange(self.lanes_key, 0, 0, withscores=True)
                backlog, pending, parked, first, laned, lanes = await pipe.execute()
            queued = [float(score) for _, score in lanes]
            if first:
                # a job that waited in its lane carries when it was queued (``q``)
                entry, fields = first[0]
                queued.append(float(fields.get("q") or str(entry).split("-")[0]))
            oldest = max(0.0, time.time() - min(queued) / 1000) if queued else 0.0
            return QueueStats(
                backlog=int(backlog) + max(0, int(laned or 0)),
                pending=int(pending["pending"]),
                parked=int(parked),
                oldest_seconds=round(oldest, 3),
            )

        result: QueueStats = await self._grouped(op)
        return result
