"""The commands that keep what graphmem stores current: `graphmem migrate`, `reembed`,
`maintain` and `redis-copy`."""

from __future__ import annotations

import sys

from graphmem.settings import Settings


async def migrate(settings: Settings) -> list[str]:
    from graphmem.apikeys import api_keys
    from graphmem.memory.builder import MemoryBuilder

    service = MemoryBuilder.from_settings(settings).build()
    try:
        applied = await service.migrate()
        if created := await service.provision(api_keys(settings).values()):
            applied.append(f"{len(created)} tenant indexes created")
        if analysed := await service.backfill_terms():
            applied.append(f"terms of {analysed} memories analysed")
        return applied
    finally:
        await service.close()


async def reembed(settings: Settings, tenants: list[str], every: bool) -> int:
    from graphmem.memory.builder import MemoryBuilder
    from graphmem.memory.writepath.reembed import Reembed

    service = MemoryBuilder.from_settings(settings, enriches=True).build()
    try:
        await service.migrate()
        if every:
            tenants = sorted(set(await service.graph.tenants()))
        reembed = Reembed(service.graph.spaces, service.embedder, service.changes)
        for tenant in tenants:
            bar = ProgressBar(f"{tenant}: {reembed.space.model}")
            report = await reembed.tenant(tenant, bar)
            bar.close()
            print(
                f"{tenant}: {report.memories} memories hold {report.model}'s vectors "
                f"({report.embedded} embedded in this run, {report.swapped} swapped; "
                f"{report.tasks} tasks and episodes)"
            )
    finally:
        await service.close()
    return 0


class ProgressBar:
    """A bar on stderr, redrawn in place on a terminal and printed every tenth of the way
    otherwise (a log file gets ten lines, not ten thousand)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.tty = sys.stderr.isatty()
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        share = done / total if total else 1.0
        if self.tty:
            filled = int(30 * share)
            line = f"\r{self.label} [{'#' * filled}{' ' * (30 - filled)}] {done}/{total}"
            print(line, end="", file=sys.stderr, flush=True)
        elif int(10 * share) > self.shown:
            self.shown = int(10 * share)
            print(f"{self.label}: {done}/{total} memories", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print(file=sys.stderr)


async def redis_copy(settings: Settings, to: str, cluster: bool) -> int:
    from graphmem.stores.redis.client import connect
    from graphmem.stores.redis.layout import copy

    source = connect(settings.resolved_redis_url, settings.redis_cluster, decode=False)
    target = connect(to, cluster, decode=False)
    try:
        print(f"copied {await copy(source, target)} keys to {to}")
    finally:
        await source.aclose()
        await target.aclose()
    return 0


async def maintain(settings: Settings) -> int:
    from graphmem.memory.builder import MemoryBuilder

    service = MemoryBuilder.from_settings(settings).build()
    try:
        report = await service.maintenance.run_once()
    finally:
        await service.close()
    print(report.model_dump_json(indent=2))
    return 1 if report.errors else 0
