"""The configuration of the memory itself: the tiers (``MemoryConfig``, the ``memory``
section of the settings, which a client may override per session) and the configured
agent personas (``PersonaConfig``, the ``personas`` section). ``graphmem.settings``
reads both with the rest of the settings.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
