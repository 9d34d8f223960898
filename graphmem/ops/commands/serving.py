"""The commands that serve: `graphmem serve` (the API and its enrichment workers),
`graphmem worker` and `graphmem mcp` (the MCP tools over stdio)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import signal
import subprocess
import sys

from graphmem.errors import ConfigurationError
from graphmem.ops.commands.stack import print_keys, services
from graphmem.settings import Settings


async def mcp_stdio(settings: Settings, key: str | None) -> int:
    from mcp.server.stdio import stdio_server

    from graphmem.api.mcp import build_server
    from graphmem.apikeys import KeyRing, api_keys
    from graphmem.memory.builder import MemoryBuilder

    keys = api_keys(settings)
    if key is None and not settings.api_keys:
        (key,) = keys
    tenant = KeyRing(keys).tenant(f"Bearer {key}") if key else None
    if tenant is None:
        print("graphmem: give a valid API key with --key or GRAPHMEM_KEY", file=sys.stderr)
        return 2
    service = MemoryBuilder.from_settings(settings).build()
    try:
        await service.migrate()
        await service.provision([tenant])
        server = build_server(lambda: service, lambda _ctx: tenant)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await service.close()
    return 0


async def enrichment_worker(settings: Settings, drain: bool, parked: bool = False) -> int:
    import signal

    from graphmem.memory.builder import MemoryBuilder
    from graphmem.ops import allocator

    allocator.tune()

    if not settings.write_behind:
        print("graphmem: write-behind is off (GRAPHMEM_WRITE_BEHIND=false)", file=sys.stderr)
        return 2
    service = MemoryBuilder.from_settings(settings, enriches=True).build()
    assert service.worker is not None
    service.worker.reclaim_idle_seconds = settings.enrich_reclaim_seconds
    service.worker.item_seconds = settings.enrich_item_seconds
    try:
        if parked:
            assert service.queue is not None
            for job in await service.queue.parked(count=1000):
                print(json.dumps(job))
            return 0
        if drain:
            await service.worker.drain(seconds=3600)
            return 0
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        log = logging.getLogger("graphmem.worker")
        log.info("enrichment worker %s started", service.worker.name)
        if line := await service.spaces.report():
            log.warning(line)
        await service.worker.run(stop)
    finally:
        await service.close()
    return 0


def lower_priority(nice: int, idle_class: bool) -> None:
    """Give this process the enrichment worker's CPU priority: a session and a scheduler
    group (Linux's autogroup) of its own with ``nice`` (in the parent's group its
    niceness counted only against the API, while the group as a whole competed with
    Neo4j's at full weight), and with ``idle_class`` Linux's SCHED_IDLE, under which it
    runs on CPU time nothing else wants and gives way at once when a request's thread
    wakes (a nice 10 process still delayed 1 wake-up in 100 by about 3 ms)."""
    os.setsid()
    with contextlib.suppress(OSError):
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
    os.nice(nice)
    if idle_class:
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def _start_workers(settings: Settings) -> list[subprocess.Popen[bytes]]:
    """The enrichment workers beside the API, at a lower CPU priority (``lower_priority``)
    so that requests come first, and ended with the parent (Linux's parent-death signal)
    however it ends."""
    if not settings.write_behind:
        return []

    def child() -> None:
        lower_priority(settings.enrich_worker_nice, settings.enrich_worker_idle_class)
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    return [
        subprocess.Popen([sys.executable, "-m", "graphmem.ops.cli", "worker"], preexec_fn=child)
        for _ in range(settings.enrich_workers)
    ]


def serve(settings: Settings, with_services: bool) -> int:
    from graphmem.ops import allocator, doctor

    allocator.tune()
    if with_services:
        services(settings, "up", as_json=False)
    for finding in doctor.run(settings, doctor.BEFORE_SERVE):
        if not finding.ok:
            raise ConfigurationError(finding.detail)
    workers = _start_workers(settings)
    try:
        return _serve_api(settings)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.kill()


def _serve_api(settings: Settings) -> int:
    import uvicorn

    from graphmem.api.http.app import create_app
    from graphmem.api.http.server import uvicorn_options
    from graphmem.apikeys import api_keys

    print_keys(settings, api_keys(settings))
    print(f"GraphQL on http://{settings.host}:{settings.port}/graphql")
    options = uvicorn_options(settings)
    if settings.workers == 1:
        uvicorn.run(create_app(settings), **options)
        return 0
    # Worker processes build their app from the environment: hand them what the
    # command line decided.
    os.environ["GRAPHMEM_HOST"] = settings.host
    os.environ["GRAPHMEM_PORT"] = str(settings.port)
    uvicorn.run(
        "graphmem.api.http.app:create_app", factory=True, workers=settings.workers, **options
    )
    return 0
