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
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from graphmem.errors import ConfigurationError

#: Tenant, session, user and item ids end up inside Redis keys and graph properties;
#: a restricted alphabet keeps keys unambiguous (no ':' or '{}' from user input). Use
#: ``fullmatch``; ``\Z``, not ``$``, which would also match before a trailing newline.
ID_PATTERN = re.compile(r"\A[A-Za-z0-9_.@-]{1,128}\Z")


#: Settings a client may override for one session (the rest are process-wide).
SESSION_OVERRIDABLE = (
    "hot_token_limit",
    "warm_access_threshold",
    "promote_threshold",
    "max_cold_items",
    "auto_spill_enabled",
    "auto_promote_enabled",
    "spill_count",
)


class PersonaConfig(BaseModel):
    """A configured agent persona (docs/concepts.md#memory-types); learned traits are
    added to it at run time."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str
    tone: str = ""
    expertise: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)


class MemoryConfig(BaseModel):
    """The tier configuration (docs/concepts.md#tiers); accepts its camelCase names too."""

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    hot_token_limit: int = Field(4000, ge=16, le=1_000_000, alias="hotTokenLimit")
    warm_access_threshold: int = Field(3, ge=0, le=1_000_000, alias="warmAccessThreshold")
    promote_threshold: float = Field(0.85, ge=0.0, le=1.0, alias="promoteThreshold")
    max_cold_items: int = Field(1000, ge=1, alias="maxColdItems")
    auto_spill_enabled: bool = Field(True, alias="autoSpillEnabled")
    auto_promote_enabled: bool = Field(True, alias="autoPromoteEnabled")
    #: how many items an explicit ``spill`` without count or ids moves (default 4)
    spill_count: int = Field(4, ge=1, le=10_000, alias="spillCount")
    #: an item recalled this often is promoted even below promoteThreshold
    #: (frequently recalled cold items get promoted)
    promote_access_count: int = Field(5, ge=1, alias="promoteAccessCount")
    #: below this cosine similarity a recalled item does not count as a hit
    min_relevance: float = Field(0.3, ge=0.0, le=1.0, alias="minRelevance")
    #: idle lifetime of a session's hot tier in Redis (refreshed by every write)
    session_ttl_seconds: int = Field(7 * 24 * 3600, ge=2, alias="sessionTtlSeconds")
    #: idle sessions are flushed to the graph this long before their hot tier expires
    #: (default: an hour, or half the TTL when that is shorter)
    flush_before_expiry_seconds: float | None = Field(None, gt=0, alias="flushBeforeExpirySeconds")
    #: how often the maintenance loop (TTL flush, catch-up spills, demotion) runs
    #: (default: a minute, or half the flush margin when that is shorter)
    maintenance_interval_seconds: float | None = Field(
        None, gt=0, alias="maintenanceIntervalSeconds"
    )
    #: warm items not accessed for this long are demoted to cold by maintenance
    demote_after_idle_seconds: float = Field(30 * 24 * 3600, gt=0, alias="demoteAfterIdleSeconds")
    #: an add that starts a spill returns at once while the session's hot tier holds at
    #: most this multiple of its budget; past it (spills lag behind the adds), the add
    #: waits for the spill ...
    spill_wait_above: float = Field(2.0, ge=1.0, le=1000.0, alias="spillWaitAbove")
    #: ... at most this long, then returns anyway
    spill_wait_seconds: float = Field(5.0, ge=0, alias="spillWaitSeconds")
    #: an automatic spill brings the hot tier down to this share of its budget, not just
    #: under it: one spill then serves many adds, instead of every add past the budget
    #: starting a spill that reads the whole hot tier for one item
    spill_low_water: float = Field(0.8, gt=0.0, le=1.0, alias="spillLowWater")
    #: items embedded and written per graph transaction during a spill
    spill_batch_size: int = Field(256, ge=1, le=10_000, alias="spillBatchSize")
    #: short-term memory: a session's recent messages live this long in Redis ...
    short_term_ttl_seconds: int = Field(3600, ge=1, alias="shortTermTtlSeconds")
    #: ... and at most this many of them are kept
    short_term_max_messages: int = Field(200, ge=1, le=100_000, alias="shortTermMaxMessages")

    @model_validator(mode="before")
    @classmethod
    def _one_name_per_setting(cls, data: Any) -> Any:
        """Accept camelCase (the API's and YAML's) and snake_case (env) names. When a merge of
        sources holds both, snake_case wins: only the environment produces it."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for name, field in cls.model_fields.items():
            if field.alias and field.alias in data:
                camel = data.pop(field.alias)
                data.setdefault(name, camel)
        return data

    @property
    def flush_margin(self) -> float:
        if self.flush_before_expiry_seconds is not None:
            return self.flush_before_expiry_seconds
        return min(3600.0, self.session_ttl_seconds / 2)

    @property
    def maintenance_interval(self) -> float:
        if self.maintenance_interval_seconds is not None:
            return self.maintenance_interval_seconds
        return min(60.0, self.flush_margin / 2)

    @model_validator(mode="after")
    def _flush_in_time(self) -> MemoryConfig:
        if self.flush_margin >= self.session_ttl_seconds:
            raise ValueError("flushBeforeExpirySeconds must be shorter than sessionTtlSeconds")
        if self.maintenance_interval * 2 > self.flush_margin:
            raise ValueError(
                "maintenanceIntervalSeconds must be at most half of flushBeforeExpirySeconds, "
                "or an idle session could expire between two maintenance runs"
            )
        return self

    def merged(self, **overrides: Any) -> MemoryConfig:
        """A copy with overrides applied; keys may use either naming style."""
        names = {f.alias: name for name, f in type(self).model_fields.items() if f.alias}
        data = self.model_dump()
        data.update({names.get(k, k): v for k, v in overrides.items()})
        return type(self).model_validate(data)


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
    fair_capacity: float = Field(0.65, gt=0)
    fair_max_wait_seconds: float = Field(1.0, gt=0, le=30)
    fair_max_queued: int = Field(64, ge=1)
    #: CPU seconds a KB of new memory costs the enrichment worker and Neo4j after the
    #: add, charged to the adding tenant's share at the add (docs/operations.md)
    fair_later_seconds_per_kb: float = Field(0.01, ge=0)
    #: per tenant: memories and bytes of content it may store (0: no quota)
    quota_memories: int = Field(0, ge=0)
    quota_bytes: int = Field(0, ge=0)
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
    #: them); the bge models are unpacked into ``models_dir`` by `graphmem services install`
    embedder: Literal["minilm-int8", "minilm-fp32", "bge-small-int8", "bge-small-fp32"] = (
        "minilm-int8"
    )
    #: where `graphmem services install` unpacks the models that come as Maven jars,
    #: shared by every local stack of this checkout
    models_dir: Path = Path(".graphmem/models")
    embed_threads: int = Field(2, ge=1, le=64)
    #: threads of a second embedder session that embeds search queries alone (0: queries
    #: share the ingest embedder). One thread: a query is a dozen tokens, and on a busy
    #: machine two threads wait for each other (p50 8 against 14 ms measured under load);
    #: the second session costs about 90 MB
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
