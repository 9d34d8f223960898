"""Versions of search scopes, shared by every API replica: what lets a replica keep a
scope's vectors in memory and still never serve a change it has not seen.

Every graph write that changes a memory bumps the version of each scope holding it (its
tenant, its session and its user) and logs the ids it changed; a search reads its
scope's version (one round trip) and, when it moved, either the ids changed since the
version it holds (patched in) or nothing usable (it rebuilds). Keys, all under the
tenant's hash tag:

- ``gm:{<tenant>}:ver:clock``          counter the versions are drawn from (never expires)
- ``gm:{<tenant>}:ver:epoch``          bumped when anything in the tenant may have changed
- ``gm:{<tenant>}:ver:<scope>``        a scope's version (``t``, ``s:<session>``, ``u:<user>``)
- ``gm:{<tenant>}:vlog:<scope>``       list of ``<previous>><version>|<ids or *>``

Versions are drawn from the tenant's clock, which starts at the time in microseconds
when it is created, so a version never repeats: a scope key that expired, or a Redis
that lost its data, reads as a version no replica holds, and they rebuild.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from redis.asyncio import Redis

from graphmem.stores.models import ScopeRead
from graphmem.stores.redis.keys import call

# Both scripts take KEYS[1] as the clock: the next number, started from the server's time
# (microseconds) when absent.
_CLOCK = """
local function clock()
  if redis.call('EXISTS', KEYS[1]) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', KEYS[1], string.format('%d', t[1] * 1000000 + t[2]))
  end
  -- '%d', not tostring: tostring rounds a number this large to 14 digits
  return string.format('%d', redis.call('INCR', KEYS[1]))
end
"""

# Read a scope's epoch and version, creating them from the clock when absent (so that a
# version, once handed out, is never handed out again); with the version the caller
# holds, also the log, when the version moved and the epoch did not.
_READ = (
    _CLOCK
    + """
local function current(key)
  local v = redis.call('GET', key)
  if not v then
    v = clock()
    redis.call('SET', key, v, 'EX', ARGV[1])
  end
  return v
end
local epoch = current(KEYS[2])
local version = current(KEYS[3])
if ARGV[3] == '' or epoch ~= ARGV[2] or version == ARGV[3] then
  return {epoch, version}
end
local out = {epoch, version}
for _, entry in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do
  table.insert(out, entry)
end
return out
"""
)

# Bump scopes: KEYS = clock, epoch, then a version key and a log key per scope; ARGV =
# ttl, log length, whether the epoch moves, then each scope's changed ids ('*': all).
_BUMP = (
    _CLOCK
    + """
if ARGV[3] == '1' then
  redis.call('SET', KEYS[2], clock(), 'EX', ARGV[1])
end
for i = 3, #KEYS, 2 do
  local previous = redis.call('GET', KEYS[i]) or ''
  local version = clock()
  redis.call('SET', KEYS[i], version, 'EX', ARGV[1])
  redis.call('RPUSH', KEYS[i + 1], previous .. '>' .. version .. '|' .. ARGV[(i + 1) / 2 + 2])
  redis.call('LTRIM', KEYS[i + 1], -tonumber(ARGV[2]), -1)
  redis.call('EXPIRE', KEYS[i + 1], ARGV[1])
end
return 1
"""
)


class RedisScopeVersions:
    #: a scope unread and unwritten this long is forgotten (its next read starts afresh)
    ttl = 7 * 24 * 3600
    #: changes remembered per scope; a replica further behind rebuilds the scope
    log_length = 64
    #: a write changing more memories than this in one scope logs '*' (rebuild)
    max_logged_ids = 256

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._read = redis.register_script(_READ)
        self._bump = redis.register_script(_BUMP)

    @staticmethod
    def _keys(tenant: str, scope: str) -> tuple[str, str]:
        tag = f"gm:{{{tenant}}}"
        return f"{tag}:ver:{scope}", f"{tag}:vlog:{scope}"

    async def read(self, tenant: str, scope: str, held: tuple[str, str] | None) -> ScopeRead:
        """The scope's (epoch, version) now and, when ``held`` is an older version of the
        same epoch, the ids changed since it (None: not known, rebuild)."""
        tag = f"gm:{{{tenant}}}"
        version_key, log_key = self._keys(tenant, scope)
        keys = [f"{tag}:ver:clock", f"{tag}:ver:epoch", version_key, log_key]
        args: list[str | int] = [self.ttl, *(held or ("", ""))]
        raw = await call(lambda: self._read(keys=keys, args=args))
        epoch, version, *log = (x.decode() if isinstance(x, bytes) else str(x) for x in raw)
        if held is None or held[0] != epoch:
            return ScopeRead(epoch, version, None)
        if held[1] == version:
            return ScopeRead(epoch, version, frozenset())
        return ScopeRead(epoch, version, _changed_since(log, held[1], version))

    async def bump(
        self,
        tenant: str,
        scopes: Mapping[str, Sequence[str] | None],
        everything: bool = False,
    ) -> None:
        """New versions for ``scopes`` (scope → the ids changed there, None for any), and
        with ``everything`` for every scope of the tenant."""
        tag = f"gm:{{{tenant}}}"
        keys = [f"{tag}:ver:clock", f"{tag}:ver:epoch"]
        args: list[str | int] = [self.ttl, self.log_length, "1" if everything else "0"]
        for scope, ids in scopes.items():
            keys += self._keys(tenant, scope)
            unique = sorted(set(ids)) if ids is not None else None
            fits = unique is not None and len(unique) <= self.max_logged_ids
            args.append(",".join(unique) if fits and unique is not None else "*")
        await call(lambda: self._bump(keys=keys, args=args))


def _changed_since(log: list[str], held: str, current: str) -> frozenset[str] | None:
    """The ids the log's entries after ``held`` changed, if the log reaches back to it
    unbroken up to ``current``."""
    changed: set[str] = set()
    at = held
    for entry in log:
        link, _, ids = entry.partition("|")
        previous, _, version = link.partition(">")
        if previous != at:
            if at == held:
                continue  # entries older than what this replica holds
            return None  # a bump whose previous version was lost (an expired key)
        if ids == "*":
            return None
        changed.update(i for i in ids.split(",") if i)
        at = version
    return frozenset(changed) if at == current else None
