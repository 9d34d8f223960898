"""The ``graphmem`` command.

graphmem services up|down|status   the local Neo4j + Redis stack
graphmem migrate                   apply cypher/schema to Neo4j
graphmem serve [--services]        the API (applies the migration first)
graphmem schema                    print the GraphQL SDL
graphmem key                       print the local development API key
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time

from .errors import ConfigurationError
from .settings import Settings, load_settings


def _services(settings: Settings, action: str, as_json: bool) -> int:
    from .api.auth import api_keys
    from .services import LocalStack

    stack = LocalStack(settings)
    if action == "up":
        started = time.monotonic()
        stack.up()
        print(
            f"Neo4j   {stack.neo4j_uri}  (Browser: http://127.0.0.1:{settings.neo4j_http_port}/browser/,"
            f" user {settings.neo4j_user})"
        )
        print(
            f"Redis   {stack.redis_url}  (appendonly yes, appendfsync {settings.redis_appendfsync})"
        )
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


def _print_keys(settings: Settings, keys: dict[str, str]) -> None:
    if settings.api_keys:
        tenants = ", ".join(sorted(set(keys.values())))
        print(f"API keys from settings for tenants: {tenants}")
    else:
        (key,) = keys
        print(f"API key (tenant 'dev'): {key}   (stored in {settings.dev_key_file})")


async def _migrate(settings: Settings) -> list[str]:
    from .builder import MemoryBuilder

    service = MemoryBuilder.from_settings(settings).build()
    try:
        return await service.migrate()
    finally:
        await service.close()


def _serve(settings: Settings, with_services: bool) -> int:
    import uvicorn

    from .api.app import create_app
    from .api.auth import api_keys

    if with_services:
        _services(settings, "up", as_json=False)
    _print_keys(settings, api_keys(settings))
    print(f"GraphQL on http://{settings.host}:{settings.port}/graphql")
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_level="info",
        access_log=False,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="graphmem", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    services = sub.add_parser("services", help="run the local Neo4j and Redis")
    services.add_argument("action", choices=["up", "down", "status"])
    services.add_argument("--json", action="store_true")
    sub.add_parser("migrate", help="apply cypher/schema to Neo4j")
    serve = sub.add_parser("serve", help="run the GraphQL API")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument(
        "--services", action="store_true", help="start the local Neo4j and Redis first"
    )
    sub.add_parser("schema", help="print the GraphQL SDL")
    sub.add_parser("key", help="print the local development API key (tenant dev)")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        overrides = {}
        if getattr(args, "host", None):
            overrides["host"] = args.host
        if getattr(args, "port", None):
            overrides["port"] = args.port
        settings = load_settings(**overrides)
        if args.command == "services":
            return _services(settings, args.action, args.json)
        if args.command == "migrate":
            for name in asyncio.run(_migrate(settings)):
                print(f"applied {name}")
            return 0
        if args.command == "serve":
            return _serve(settings, args.services)
        if args.command == "schema":
            from .api.schema import build_schema

            print(build_schema().as_str())
            return 0
        if args.command == "key":
            from .api.auth import dev_key

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
