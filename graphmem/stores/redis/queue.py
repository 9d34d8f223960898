"""The enrichment queue: a Redis Stream of write-behind jobs with one consumer group, so
that any number of ``graphmem worker`` processes on any machines share the work.

- ``gm:{enrich}``          stream: one entry per added batch (tenant, session, item ids)
- ``gm:{enrich}:parked``   stream: jobs that failed ``max_attempts`` times, with the error
- ``gm:{enrich}:workers``  sorted set: each running worker, scored by its last heartbeat
  (Redis's clock, in ms: workers and API replicas on other machines agree on it)
- ``gm:{enrich}:waiting``  hash: per tenant, its items on the stream (changed atomically with
  the stream, so a tenant can follow its own backlog without seeing anyone else's)
- ``gm:{enrich}:parked:n`` hash: per tenant, its items in parked jobs

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

# One hash tag for the stream and its counters: the scripts touch them together, so in a
# Redis Cluster they share a slot (and a node; docs/scaling.md).
STREAM = "gm:{enrich}"
PARKED = "gm:{enrich}:parked"
GROUP = "enrichers"


def _job(entry: Any, fields: dict[str, str], delivered: int = 1) -> EnrichmentJob:
    return EnrichmentJob(
        entry=str(entry),
        tenant=fields["t"],
        session_id=fields["s"],
        ids=json.loads(fields["ids"]),
        attempt=int(fields.get("a", "0")) + delivered,
        counted=fields.get("c") == "1",
    )


def _fields(
    tenant: str, session_id: str, ids: Sequence[str], counted: bool = True
) -> dict[Any, Any]:
    """An entry's fields, as ``_job`` reads them back. ``c`` marks a job whose items are
    in the tenant's waiting count (a job queued before the counts existed is not)."""
    out = {"t": tenant, "s": session_id, "ids": json.dumps(list(ids))}
    return out | {"c": "1"} if counted else out


# KEYS: stream, waiting counts, parked counts, parked stream
# ARGV: group, ack | retry | park, n, n field/value pairs of the replacement entry, then
#       (entry, tenant, items) for each job
_SETTLE = """
local mode, nf = ARGV[2], tonumber(ARGV[3])
local fields = {}
for i = 1, nf * 2 do fields[i] = ARGV[3 + i] end
for i = 4 + nf * 2, #ARGV, 3 do
  local entry, tenant, n = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  if redis.call('XACK', KEYS[1], ARGV[1], entry) == 1 then
    redis.call('XDEL', KEYS[1], entry)
    if mode == 'retry' then
      redis.call('XADD', KEYS[1], '*', unpack(fields))
    else
      if tenant ~= '' and n > 0 and redis.call('HINCRBY', KEYS[2], tenant, -n) < 0 then
        redis.call('HSET', KEYS[2], tenant, 0)  -- never below 0, whatever happened before
      end
      if mode == 'park' then
        redis.call('XADD', KEYS[4], '*', unpack(fields))
        if tenant ~= '' and n > 0 then redis.call('HINCRBY', KEYS[3], tenant, n) end
      end
    end
  end
end
return 0
"""


# KEYS: stream, waiting counts   ARGV: tenant, items, the entry's field/value pairs
_ADD = """
redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
local n = tonumber(ARGV[2])
if redis.call('HINCRBY', KEYS[2], ARGV[1], n) < n then
  redis.call('HSET', KEYS[2], ARGV[1], n)  -- a count left below 0 (see _SETTLE) starts over
end
return 0
"""

# KEYS: workers   ARGV: consumer, 1 (alive) | 0 (stopping)
_BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 3600000)
return 0
"""

# KEYS: workers   ARGV: within ms
_WORKERS = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], now - tonumber(ARGV[1]), '+inf')
"""


class RedisEnrichmentQueue:
    def __init__(self, redis: Redis, stream: str = STREAM) -> None:
        self._redis = redis
        self.stream = stream
        self.parked_stream = f"{stream}:parked"
        self.workers_key = f"{stream}:workers"
        self.waiting_key = f"{stream}:waiting"
        self.parked_count_key = f"{stream}:parked:n"
        self._settle_script = redis.register_script(_SETTLE)
        self._add_script = redis.register_script(_ADD)
        self._beat_script = redis.register_script(_BEAT)
        self._workers_script = redis.register_script(_WORKERS)
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

        flat = [x for kv in fields.items() for x in kv]
        await call(
            lambda: self._add_script(
                keys=[self.stream, self.waiting_key], args=[tenant, len(ids), *flat]
            )
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
        triples = [x for j in jobs for x in (j.entry, j.tenant, len(j.ids) if j.counted else 0)]
        await self._settle_script(
            keys=[self.stream, self.waiting_key, self.parked_count_key, self.parked_stream],
            args=[GROUP, mode, len(fields) // 2, *fields, *triples],
        )

    async def retry(self, job: EnrichmentJob) -> None:
        """Put a failed job back at the end of the stream with its attempt count."""
        fields = _fields(job.tenant, job.session_id, job.ids, job.counted) | {"a": str(job.attempt)}
        await call(lambda: self._settle([job], (self.stream, fields)))

    async def park(self, job: EnrichmentJob, error: str) -> None:
        fields = _fields(job.tenant, job.session_id, job.ids, job.counted)
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
