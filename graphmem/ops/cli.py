"""The ``graphmem`` command.

graphmem services up|down|status   the local Neo4j + Redis stack
graphmem services install          only resolve what `services up` runs (Java, jars, Redis)
                                   and the embedding models that come as jars
graphmem ide-assets                fetch the GraphQL IDE's files (GraphiQL, React) with npm
graphmem doctor                    check Java, Maven, Neo4j, Redis, the models and the keys
graphmem migrate                   apply cypher/schema to Neo4j; move Redis keys an older
                                   version wrote to the current key layout
graphmem serve [--services]        the API (applies the migration first) and its
                                   enrichment workers
graphmem worker [--drain]          one enrichment worker (write-behind into the graph)
graphmem reembed --tenant T|--all  move tenants' vectors to GRAPHMEM_EMBEDDER's model,
                                   online and resumably
graphmem schema                    print the GraphQL SDL
graphmem key                       print the local development API key
graphmem import FILE               add memories from JSONL, LoCoMo or OpenAI-chat files (resumable)
graphmem export --user ID          a user's memories (every tier) and entities as JSONL
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from graphmem.errors import ConfigurationError
from graphmem.settings import Settings, load_settings

if TYPE_CHECKING:
    from graphmem.client import Graphmem
    from graphmem.enrich.jarmodels import JarModel


def _services(settings: Settings, action: str, as_json: bool, redis_cluster: bool = False) -> int:
    from graphmem.apikeys import api_keys
    from graphmem.ops.devstack import LocalStack
    from graphmem.ops.devstack.models import install as install_model

    stack = LocalStack(settings, redis_cluster=redis_cluster or settings.redis_cluster)
    if action == "install":
        stack.neo4j.java()
        print("neo4j jars in", stack.neo4j.resolve())
        print("redis-server at", stack.redis.binary())
        for model in _jar_models(settings):
            print(f"{model.name} model in", install_model(model, settings.models_dir))
        return 0
    if action == "up":
        started = time.monotonic()
        stack.up()
        print(
            f"Neo4j   {stack.neo4j_uri}  (Browser: http://127.0.0.1:{settings.neo4j_http_port}/browser/,"
            f" user {settings.neo4j_user})"
        )
        fsync = f"appendonly yes, appendfsync {settings.redis_appendfsync}"
        if stack.redis_cluster:
            ports = stack.cluster.ports
            print(
                f"Redis Cluster  {stack.redis_url}  (ports {ports[0]}-{ports[-1]}: 3 masters,"
                f" 3 replicas; {fsync}); serve with REDIS_URL={stack.redis_url} REDIS_CLUSTER=true"
            )
        else:
            print(f"Redis   {stack.redis_url}  ({fsync})")
        _print_keys(settings, api_keys(settings))
        print(f"ready in {time.monotonic() - started:.1f}s; stop with: graphmem services down")
    elif action == "down":
        stack.down()
        print("stopped Neo4j and Redis")
    else:
        report = stack.status()
        if as_json:
            print(json.dumps(report, indent=2))
        else:
            for row in report:
                state = "running" if row["running"] else "stopped"
                print(
                    f"{row['service']:6} {state:8} "
                    + "  ".join(
                        f"{k}={v}" for k, v in row.items() if k not in ("service", "running")
                    )
                )
        return 0 if all(r["running"] for r in report) else 3
    return 0


def _jar_models(settings: Settings) -> list[JarModel]:
    """The models `services install` unpacks: bge-small int8 always (the benchmarks
    compare it), and the configured embedder's when it comes as a jar."""
    from graphmem.enrich.jarmodels import JAR_MODELS

    names = dict.fromkeys(["bge-small-int8", settings.embedder])
    return [JAR_MODELS[n] for n in names if n in JAR_MODELS]


def _print_keys(settings: Settings, keys: dict[str, str]) -> None:
    if settings.api_keys:
        tenants = ", ".join(sorted(set(keys.values())))
        print(f"API keys from settings for tenants: {tenants}")
    else:
        (key,) = keys
        print(f"API key (tenant 'dev'): {key}   (stored in {settings.dev_key_file})")


async def _migrate(settings: Settings) -> list[str]:
    from graphmem.memory.builder import MemoryBuilder

    service = MemoryBuilder.from_settings(settings).build()
    try:
        applied = await service.migrate()
        if analysed := await service.backfill_terms():
            applied.append(f"terms of {analysed} memories analysed")
        return applied
    finally:
        await service.close()


async def _reembed(settings: Settings, tenants: list[str], every: bool) -> int:
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


async def _redis_copy(settings: Settings, to: str, cluster: bool) -> int:
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


async def _maintain(settings: Settings) -> int:
    from graphmem.memory.builder import MemoryBuilder

    service = MemoryBuilder.from_settings(settings).build()
    try:
        report = await service.maintenance.run_once()
    finally:
        await service.close()
    print(report.model_dump_json(indent=2))
    return 1 if report.errors else 0


async def _mcp_stdio(settings: Settings, key: str | None) -> int:
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
        server = build_server(lambda: service, lambda _ctx: tenant)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await service.close()
    return 0


async def _worker(settings: Settings, drain: bool, parked: bool = False) -> int:
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


def _doctor(settings: Settings) -> int:
    from graphmem.ops import doctor

    failed = 0
    for finding in doctor.run(settings, doctor.ALL):
        print(finding.line(), flush=True)
        failed += not finding.ok
    print("everything graphmem needs is in place" if not failed else f"{failed} to fix")
    return 1 if failed else 0


def _serve(settings: Settings, with_services: bool) -> int:
    from graphmem.ops import allocator, doctor

    allocator.tune()
    if with_services:
        _services(settings, "up", as_json=False)
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

    _print_keys(settings, api_keys(settings))
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


def _client(args: argparse.Namespace) -> Graphmem:
    from graphmem.client import Graphmem

    if not args.key:
        raise ConfigurationError("GRAPHMEM_KEY: give the API key with --key or GRAPHMEM_KEY")
    return Graphmem(args.url, args.key)


def _import(args: argparse.Namespace) -> int:
    """Exit 0 when the import ran to the end, skipped entries and all (each is printed on
    stderr with where and why); 1 when none of the file's entries could be imported
    (every one skipped), when ``--strict`` and any was skipped, or when the API stopped
    it (a rerun resumes)."""
    from tqdm import tqdm

    from graphmem.client import GraphmemError
    from graphmem.transfer.importer import import_file
    from graphmem.transfer.sources import Skipped

    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request drowns the skips

    def skipped(entry: Skipped) -> None:
        tqdm.write(f"{args.file}: {entry.where}: skipped: {entry.reason}", file=sys.stderr)

    try:
        with _client(args) as gm:
            report = import_file(
                gm,
                Path(args.file),
                batch=args.batch,
                progress=not args.quiet,
                wait_seconds=args.wait,
                on_skip=skipped,
            )
    except OSError as exc:
        print(f"graphmem import: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except GraphmemError as exc:
        print(f"graphmem import: stopped: {exc} (run it again to resume)", file=sys.stderr)
        return 1
    print(
        f"imported {report.added}, already there {report.duplicates}, "
        f"skipped {report.skipped}, spilled {report.spilled}"
    )
    if report.tasks_added or report.tasks_skipped:
        print(f"tasks: added {report.tasks_added}, already there {report.tasks_skipped}")
    if report.waiting:
        print(
            f"{report.waiting} memories still wait for their vectors and entities "
            "(searchable by their words meanwhile; the `enrichment` query follows them)"
        )
    usable = report.added + report.duplicates + report.tasks_added + report.tasks_skipped
    if report.skipped and (args.strict or not usable):
        return 1
    return 0


def _export(args: argparse.Namespace) -> int:
    from graphmem.transfer.exporter import export_user

    with _client(args) as gm:
        if args.out == "-":
            done = export_user(gm, args.user, sys.stdout)
        else:
            with open(args.out, "w", encoding="utf-8") as out:
                done = export_user(gm, args.user, out)
    print(
        f"exported {done.memories} memories, {done.entities} entities and {done.tasks} "
        f"tasks of {args.user}",
        file=sys.stderr,
    )
    return 0


def _batch_size(text: str) -> int:
    try:
        size = int(text)
    except ValueError:
        size = 0
    if not 1 <= size <= 500:
        raise argparse.ArgumentTypeError("a number from 1 to 500")
    return size


def _api_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        default=os.environ.get("GRAPHMEM_URL", "http://127.0.0.1:8000"),
        help="the API (default: $GRAPHMEM_URL or http://127.0.0.1:8000)",
    )
    parser.add_argument(
        "--key", default=os.environ.get("GRAPHMEM_KEY"), help="API key (default: $GRAPHMEM_KEY)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="graphmem", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    services = sub.add_parser("services", help="run the local Neo4j and Redis")
    services.add_argument("action", choices=["up", "down", "status", "install"])
    services.add_argument("--json", action="store_true")
    services.add_argument(
        "--redis-cluster",
        action="store_true",
        help="a local Redis Cluster (3 masters, 3 replicas) instead of a single Redis",
    )
    sub.add_parser("migrate", help="apply cypher/schema to Neo4j, move old Redis keys")
    serve = sub.add_parser("serve", help="run the GraphQL API")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int, help="uvicorn worker processes (default 1)")
    serve.add_argument(
        "--services", action="store_true", help="start the local Neo4j and Redis first"
    )
    worker = sub.add_parser("worker", help="run an enrichment worker (write-behind)")
    worker.add_argument(
        "--drain", action="store_true", help="stop once the queue is empty instead of waiting"
    )
    worker.add_argument(
        "--parked", action="store_true", help="print the parked jobs (JSON lines) and exit"
    )
    sub.add_parser("maintain", help="run one maintenance pass")
    reembed = sub.add_parser(
        "reembed", help="move tenants' vectors to GRAPHMEM_EMBEDDER's model (online, resumable)"
    )
    which = reembed.add_mutually_exclusive_group(required=True)
    which.add_argument("--tenant", action="append", default=[], help="a tenant (repeatable)")
    which.add_argument("--all", action="store_true", help="every tenant of the graph")
    copy = sub.add_parser(
        "redis-copy",
        help="copy graphmem's Redis keys from REDIS_URL to another Redis or a Redis Cluster",
    )
    copy.add_argument("--to", required=True, help="the target's URL (any node of a cluster)")
    copy.add_argument("--cluster", action="store_true", help="the target is a Redis Cluster")
    mcp = sub.add_parser("mcp", help="serve the MCP tools over stdio")
    mcp.add_argument(
        "--key",
        default=os.environ.get("GRAPHMEM_KEY"),
        help="API key deciding the tenant (default: $GRAPHMEM_KEY or the dev key)",
    )
    sub.add_parser("ide-assets", help="fetch the GraphQL IDE's browser files with npm")
    sub.add_parser("doctor", help="check what graphmem needs and say what to fix")
    sub.add_parser("schema", help="print the GraphQL SDL")
    sub.add_parser("key", help="print the local development API key (tenant dev)")
    importing = sub.add_parser("import", help="add memories from a file, resumably")
    importing.add_argument("file")
    importing.add_argument(
        "--batch", type=_batch_size, default=200, help="memories per addMemories (1-500)"
    )
    importing.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 if any entry was skipped (default: only if none could be imported)",
    )
    importing.add_argument("--quiet", action="store_true", help="no progress bar")
    importing.add_argument(
        "--wait",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="then follow enrichment until the memories are searchable by meaning too, "
        "at most this long (0: return at once; default 600)",
    )
    _api_options(importing)
    exporting = sub.add_parser("export", help="a user's memories and entities as JSONL")
    exporting.add_argument("--user", required=True)
    exporting.add_argument("--out", default="-", help="file to write (default: stdout)")
    _api_options(exporting)
    args = parser.parse_args(argv)

    # stdout belongs to the protocol under `graphmem mcp`: log to stderr, always.
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )
    try:
        overrides = {}
        if getattr(args, "host", None):
            overrides["host"] = args.host
        if getattr(args, "port", None):
            overrides["port"] = args.port
        if getattr(args, "workers", None):
            overrides["workers"] = args.workers
        # import and export speak to a running API; they need no settings of the server
        if args.command == "import":
            return _import(args)
        if args.command == "export":
            return _export(args)
        settings = load_settings(**overrides)
        if args.command == "services":
            return _services(settings, args.action, args.json, args.redis_cluster)
        if args.command == "migrate":
            for name in asyncio.run(_migrate(settings)):
                print(f"applied {name}")
            return 0
        if args.command == "worker":
            return asyncio.run(_worker(settings, args.drain, args.parked))
        if args.command == "redis-copy":
            return asyncio.run(_redis_copy(settings, args.to, args.cluster))
        if args.command == "maintain":
            return asyncio.run(_maintain(settings))
        if args.command == "reembed":
            return asyncio.run(_reembed(settings, args.tenant, args.all))
        if args.command == "mcp":
            return asyncio.run(_mcp_stdio(settings, args.key))
        if args.command == "serve":
            return _serve(settings, args.services)
        if args.command == "ide-assets":
            from graphmem.api.ide.assets import fetch

            print("GraphQL IDE files in", fetch())
            return 0
        if args.command == "doctor":
            return _doctor(settings)
        if args.command == "schema":
            from graphmem.api.graphql.schema import build_schema

            print(build_schema().as_str())
            return 0
        if args.command == "key":
            from graphmem.apikeys import dev_key

            if settings.api_keys:
                print(
                    "graphmem: API keys come from settings (GRAPHMEM_API_KEYS or graphmem.yaml);"
                    " there is no dev key",
                    file=sys.stderr,
                )
                return 2
            print(dev_key(settings.dev_key_file))  # bare, for $(graphmem key)
            return 0
    except (ConfigurationError, TimeoutError) as exc:
        print(f"graphmem: {exc}", file=sys.stderr)
        return 2
    return 1


if __name__ == "__main__":
    sys.exit(main())
