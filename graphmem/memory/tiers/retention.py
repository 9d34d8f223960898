"""Retention: pruning policies by age, count and size.

``select`` is a pure function, so a dry run and an apply choose exactly the same memories:
the service runs it on the candidates, and an apply deletes precisely the ids it chose.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphmem.domain.models import MemoryType, Tier, to_datetime


class PrunePolicy(BaseModel):
    """Remove graph memories (warm, cold) in scope that are

    - older than ``older_than_seconds``, or
    - beyond the ``keep_newest`` newest of their session, or
    - beyond ``max_bytes_per_session`` of content, counting newest first.
    """

    model_config = ConfigDict(extra="forbid")

    tiers: list[Tier] = Field(default_factory=lambda: [Tier.WARM, Tier.COLD])
    types: list[MemoryType] | None = None
    session_id: str | None = None
    user_id: str | None = None
    # a thousand years: beyond it the cutoff date does not exist
    older_than_seconds: float | None = Field(None, gt=0, le=3.2e10)
    keep_newest: int | None = Field(None, ge=0)
    max_bytes_per_session: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one_rule_at_least(self) -> PrunePolicy:
        if Tier.HOT in self.tiers:
            raise ValueError("tiers: prune works on WARM and COLD; the hot tier has its budget")
        if not self.tiers:
            raise ValueError("tiers: at least one tier is required")
        if (
            self.older_than_seconds is None
            and self.keep_newest is None
            and self.max_bytes_per_session is None
        ):
            raise ValueError(
                "give at least one rule: olderThanSeconds, keepNewest or maxBytesPerSession"
            )
        return self


def select(candidates: Sequence[dict[str, Any]], policy: PrunePolicy, now: datetime) -> list[str]:
    """The ids the policy removes, oldest first within each session."""
    doomed: set[str] = set()
    cutoff = now - timedelta(seconds=policy.older_than_seconds or 0)
    sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in candidates:
        sessions[row["sessionId"]].append(row)
        if policy.older_than_seconds is not None and to_datetime(row["createdAt"]) < cutoff:
            doomed.add(row["id"])
    for rows in sessions.values():
        newest_first = sorted(
            rows,
            key=lambda r: (to_datetime(r["createdAt"]), r.get("seq") or 0, r["id"]),
            reverse=True,
        )
        if policy.keep_newest is not None:
            doomed.update(r["id"] for r in newest_first[policy.keep_newest :])
        if policy.max_bytes_per_session is not None:
            total = 0
            for r in newest_first:
                total += int(r["bytes"] or 0)
                if total > policy.max_bytes_per_session:
                    doomed.add(r["id"])
    order = {r["id"]: (to_datetime(r["createdAt"]), r.get("seq") or 0) for r in candidates}
    return sorted(doomed, key=lambda i: (order[i], i))
