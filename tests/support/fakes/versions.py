"""In-memory scope versions (``ScopeVersions``), as ``graphmem/stores/redis/versions.py``
keeps them: versions drawn from a per-tenant clock (so one never repeats), an epoch
that ``everything`` moves, and a log per scope of the ids each bump changed, as long as
``log_length`` bumps and naming at most ``max_logged_ids`` ids a bump. Versions do not
expire here (the real ones do after a week unread)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from graphmem.stores.models import ScopeRead
from graphmem.stores.redis.versions import RedisScopeVersions

#: previous version ('' for none), version, ids changed (None: any)
Entry = tuple[str, str, frozenset[str] | None]


@dataclass
class _Tenant:
    clock: int = field(default_factory=lambda: int(time.time() * 1_000_000))
    epoch: str | None = None
    versions: dict[str, str] = field(default_factory=dict)
    logs: dict[str, list[Entry]] = field(default_factory=dict)

    def tick(self) -> str:
        self.clock += 1
        return str(self.clock)


class FakeScopeVersions:
    log_length = RedisScopeVersions.log_length
    max_logged_ids = RedisScopeVersions.max_logged_ids

    def __init__(self) -> None:
        self._tenants: dict[str, _Tenant] = {}
        #: every bump, in order: (tenant, scopes with their ids, everything)
        self.bumps: list[tuple[str, dict[str, set[str] | None], bool]] = []

    async def read(self, tenant: str, scope: str, held: tuple[str, str] | None) -> ScopeRead:
        t = self._tenants.setdefault(tenant, _Tenant())
        if t.epoch is None:
            t.epoch = t.tick()
        version = t.versions.get(scope)
        if version is None:
            version = t.versions[scope] = t.tick()
        if held is None or held[0] != t.epoch:
            return ScopeRead(t.epoch, version, None)
        if held[1] == version:
            return ScopeRead(t.epoch, version, frozenset())
        return ScopeRead(t.epoch, version, _since(t.logs.get(scope, []), held[1], version))

    async def bump(
        self,
        tenant: str,
        scopes: Mapping[str, Sequence[str] | None],
        everything: bool = False,
    ) -> None:
        t = self._tenants.setdefault(tenant, _Tenant())
        if everything:
            t.epoch = t.tick()
        logged: dict[str, set[str] | None] = {}
        for scope, ids in scopes.items():
            unique = frozenset(ids) if ids is not None else None
            if unique is not None and len(unique) > self.max_logged_ids:
                unique = None
            previous = t.versions.get(scope, "")
            version = t.versions[scope] = t.tick()
            log = t.logs.setdefault(scope, [])
            log.append((previous, version, unique))
            del log[: -self.log_length]
            logged[scope] = None if unique is None else set(unique)
        self.bumps.append((tenant, logged, everything))


def _since(log: list[Entry], held: str, current: str) -> frozenset[str] | None:
    """The ids changed from ``held`` to ``current``, when the log links the two."""
    start = next((n for n, (previous, _, _) in enumerate(log) if previous == held), None)
    if start is None:
        return None
    changed: set[str] = set()
    at = held
    for previous, version, ids in log[start:]:
        if previous != at or ids is None:
            return None
        changed |= ids
        at = version
    return frozenset(changed) if at == current else None
