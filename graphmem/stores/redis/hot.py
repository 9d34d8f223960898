"""The Redis hot tier: the items a session keeps close, with their token total.

The keys are laid out in ``keys.py``; the per-session settings and the indexes the
maintenance loop walks are the session index (``index.py``), reached as ``index``.

Writes and removals of a session's keys are Lua scripts, so the token total always
equals the sum of the items. The session index is written after a put and cleaned after
a remove, in that order: it may name an item or a session that is gone, never miss one
that is there (``keys.py``). Every write refreshes the session's TTL; the maintenance
loop flushes sessions before that TTL runs out.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from graphmem.domain.models import LEGACY_EMBEDDING_MODEL, MemoryItem
from graphmem.stores import SessionIndex, SessionLocks
from graphmem.stores.models import Enriched
from graphmem.stores.redis.client import connect
from graphmem.stores.redis.durable import ReplicaWait
from graphmem.stores.redis.index import RedisSessionIndex
from graphmem.stores.redis.keys import call, session_keys, tenant_keys
from graphmem.stores.redis.layout import upgrade
from graphmem.stores.redis.locks import RedisSessionLocks

# KEYS: items, meta, config, emb   ARGV: ttl, (id, doc, tokens)*
_PUT = """
local total = 0
for i = 2, #ARGV, 3 do
  local id, doc, tokens = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local old = redis.call('HGET', KEYS[1], id)
  if old then total = total - cjson.decode(old)['token_count'] end
  redis.call('HSET', KEYS[1], id, doc)
  total = total + tokens
end
local t = redis.call('HINCRBY', KEYS[2], 'tokens', total)
for k = 1, 4 do redis.call('EXPIRE', KEYS[k], ARGV[1]) end
return {t, redis.call('HGETALL', KEYS[3])}
"""

# KEYS: items, meta, emb   ARGV: id*   returns the ids removed, then 1 if the session
# is left empty (0 if not)
_REMOVE = """
local removed = {}
local total = 0
for i = 1, #ARGV do
  local old = redis.call('HGET', KEYS[1], ARGV[i])
  if old then
    total = total + cjson.decode(old)['token_count']
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[3], ARGV[i], ARGV[i] .. ':x')
    removed[#removed + 1] = ARGV[i]
  end
end
if total ~= 0 then redis.call('HINCRBY', KEYS[2], 'tokens', -total) end
local empty = 0
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
  empty = 1
end
removed[#removed + 1] = empty
return removed
"""

# KEYS: items   ARGV: (id, doc)*   rewrites items that are still present
_TOUCH = """
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
return 1
"""

# KEYS: items, emb   ARGV: ttl, model, legacy model, (field, value)*   a field "<id>" or
# "<id>:x" is kept only while item <id> is in the session: a spill or forget in between
# leaves nothing behind. The hash holds one model's vectors (its "@model" field; none:
# the legacy model's): another model's are dropped first.
_KEEP = """
local held = redis.call('HGET', KEYS[2], '@model') or ARGV[3]
if held ~= ARGV[2] then redis.call('DEL', KEYS[2]) end
redis.call('HSET', KEYS[2], '@model', ARGV[2])
for i = 4, #ARGV, 2 do
  local id = string.gsub(ARGV[i], ':x$', '')
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 1
"""


def _flat(mapping: Mapping[str, str]) -> list[str]:
    return [x for pair in mapping.items() for x in pair]


log = logging.getLogger("graphmem.stores")


def _decoded(docs: Iterable[str]) -> list[MemoryItem]:
    """Items that decode; one that does not (written by hand or by an older version) is
    logged and left out, so it cannot make its session unreadable."""
    items: list[MemoryItem] = []
    for doc in docs:
        try:
            items.append(MemoryItem.from_json(doc))
        except ValueError as exc:
            log.warning("skipped an unreadable hot item: %s", str(exc)[:200])
    return items


def _encode_vector(vector: Sequence[float]) -> str:
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def _decode_vector(raw: str) -> list[float]:
    vector: list[float] = np.frombuffer(base64.b64decode(raw), dtype=np.float32).tolist()
    return vector


class RedisHotTier:
    def __init__(
        self,
        redis: Redis,
        session_ttl_seconds: int = 7 * 24 * 3600,
        wait: ReplicaWait | None = None,
    ) -> None:
        self._redis = redis
        self.ttl = session_ttl_seconds
        # With ``wait``, an add is acknowledged once replicas hold its items and index
        # entries (``durable.py``).
        self._wait = wait
        self._put = redis.register_script(_PUT)
        self._remove = redis.register_script(_REMOVE)
        self._touch = redis.register_script(_TOUCH)
        self._keep = redis.register_script(_KEEP)
        # Declared as the protocol type: HotTier's attributes are settable, so a
        # structural match needs this exact type.
        self._index = RedisSessionIndex(redis, lambda: self.ttl, wait)
        self.index: SessionIndex = self._index
        self.locks: SessionLocks = RedisSessionLocks(redis)

    @classmethod
    def connect(
        cls,
        url: str,
        session_ttl_seconds: int = 7 * 24 * 3600,
        cluster: bool = False,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> RedisHotTier:
        client = connect(url, cluster)
        wait = ReplicaWait(client, wait_replicas, wait_timeout_ms) if wait_replicas else None
        return cls(client, session_ttl_seconds, wait)

    @property
    def client(self) -> Redis:
        """The Redis client, shared with the conversation store."""
        return self._redis

    async def close(self) -> None:
        if self._wait is not None:
            await self._wait.close()
        await self._redis.aclose()

    # The error mapping is shared with the session index (and used by the conversation
    # store through this name).
    _call = staticmethod(call)

    # --- operations -----------------------------------------------------------------
    async def ping(self) -> None:
        await self._call(lambda: cast(Awaitable[Any], self._redis.ping()))

    async def migrate(self) -> int:
        """Move keys an older version wrote to the current key layout (``layout.py``)."""
        return await upgrade(self._redis)

    async def put(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> tuple[int, dict[str, Any]]:
        """Store (or replace) items: the session's keys in one script, then its index
        entries (keys.py says why in that order).

        Returns the session's hot token total afterwards and its setting overrides."""
        k = session_keys(tenant, session_id)
        args: list[Any] = [self.ttl]
        for item in items:
            args += [item.id, item.to_json(), item.token_count]
        keys = [k.items, k.meta, k.config, k.emb]
        if self._wait is None:
            total, flat = await self._call(lambda: self._put(keys=keys, args=args))
        else:
            wait = self._wait

            async def put(pipe: Pipeline) -> None:
                await self._put(keys=keys, args=args, client=pipe)

            ((total, flat),) = await self._call(lambda: wait.run(k.items, put))
        await self._index.record(tenant, session_id, [i.id for i in items], time.time())
        overrides = {flat[i]: json.loads(flat[i + 1]) for i in range(0, len(flat), 2)}
        return int(total), overrides

    async def items(self, tenant: str, session_id: str) -> list[MemoryItem]:
        key = session_keys(tenant, session_id).items
        raw = await self._call(lambda: cast(Awaitable[dict[str, str]], self._redis.hgetall(key)))
        return _decoded(raw.values())

    async def get(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[MemoryItem]:
        if not ids:
            return []
        key = session_keys(tenant, session_id).items
        docs = await self._call(
            lambda: cast(Awaitable[list[str | None]], self._redis.hmget(key, list(ids)))
        )
        return _decoded(d for d in docs if d is not None)

    async def session_of(self, tenant: str, item_id: str) -> str | None:
        """The session an item was put in; it may since have left the hot tier (callers
        read the item from that session to know)."""
        key = tenant_keys(tenant).where
        return await self._call(lambda: cast(Awaitable[str | None], self._redis.hget(key, item_id)))

    async def tokens(self, tenant: str, session_id: str) -> int:
        key = session_keys(tenant, session_id).meta
        raw = await self._call(lambda: cast(Awaitable[str | None], self._redis.hget(key, "tokens")))
        return int(raw or 0)

    async def remove(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[str]:
        """Drop items (only after the graph holds them); returns the ids actually removed."""
        if not ids:
            return []
        k = session_keys(tenant, session_id)
        *removed, empty = await self._call(
            lambda: self._remove(keys=[k.items, k.meta, k.emb], args=list(ids))
        )
        gone = [str(i) for i in removed]
        await self._index.forget_items(tenant, gone)
        if int(empty):
            await self._index.drop_if_gone(tenant, session_id)
        return gone

    async def touch(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> None:
        """Rewrite access data of items still present (a no-op for ones spilled meanwhile)."""
        if not items:
            return
        keys = [session_keys(tenant, session_id).items]
        args: list[str] = []
        for item in items:
            args += [item.id, item.to_json()]
        await self._call(lambda: self._touch(keys=keys, args=args))

    # --- embeddings cache -------------------------------------------------------------
    async def embeddings(
        self, tenant: str, session_id: str, ids: Sequence[str], *, model: str
    ) -> dict[str, list[float]]:
        """The cached vectors of items, if the cache holds ``model``'s."""
        if not ids:
            return {}
        key = session_keys(tenant, session_id).emb
        raw = await self._call(
            lambda: cast(Awaitable[list[str | None]], self._redis.hmget(key, [*ids, "@model"]))
        )
        if (raw[-1] or LEGACY_EMBEDDING_MODEL) != model:
            return {}
        return {i: _decode_vector(r) for i, r in zip(ids, raw, strict=False) if r is not None}

    async def cache_embeddings(
        self,
        tenant: str,
        session_id: str,
        vectors: Mapping[str, Sequence[float]],
        *,
        model: str,
    ) -> None:
        if not vectors:
            return
        k = session_keys(tenant, session_id)
        args: list[str | int] = [
            self.ttl,
            model,
            LEGACY_EMBEDDING_MODEL,
            *_flat({i: _encode_vector(v) for i, v in vectors.items()}),
        ]
        await self._call(lambda: self._keep(keys=[k.items, k.emb], args=args))

    async def cached_model(self, tenant: str, session_id: str) -> str | None:
        """The model whose vectors the session's cache holds (None: no cache)."""
        key = session_keys(tenant, session_id).emb

        async def op() -> list[Any]:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.exists(key)
                pipe.hget(key, "@model")
                return await pipe.execute()

        exists, model = await self._call(op)
        if not exists:
            return None
        return str(model) if model else LEGACY_EMBEDDING_MODEL

    async def enrichment(
        self, tenant: str, session_id: str, ids: Sequence[str], *, model: str
    ) -> dict[str, Enriched]:
        """What a worker embedding with ``model`` computed for items (vector, sentence
        vectors, entities written)."""
        if not ids:
            return {}
        key = session_keys(tenant, session_id).emb
        fields = [f for i in ids for f in (i, f"{i}:x")]
        raw = await self._call(
            lambda: cast(Awaitable[list[str | None]], self._redis.hmget(key, [*fields, "@model"]))
        )
        if (raw[-1] or LEGACY_EMBEDDING_MODEL) != model:
            return {}
        found: dict[str, Enriched] = {}
        for n, item_id in enumerate(ids):
            vector, extra = raw[2 * n], raw[2 * n + 1]
            if vector is None or extra is None:
                continue
            meta = json.loads(extra)
            sentences = base64.b64decode(meta["s"]) if meta.get("s") else None
            found[item_id] = Enriched(
                vector=_decode_vector(vector), sentences=sentences, entities=bool(meta.get("e"))
            )
        return found

    async def cache_enrichment(
        self, tenant: str, session_id: str, entries: Mapping[str, Enriched], *, model: str
    ) -> None:
        """Keep what enrichment computed for items still in the session (and only those)."""
        if not entries:
            return
        mapping: dict[str, str] = {}
        for item_id, e in entries.items():
            mapping[item_id] = _encode_vector(e.vector)
            packed = base64.b64encode(e.sentences).decode("ascii") if e.sentences else None
            mapping[f"{item_id}:x"] = json.dumps({"s": packed, "e": e.entities})
        k = session_keys(tenant, session_id)
        args: list[str | int] = [self.ttl, model, LEGACY_EMBEDDING_MODEL, *_flat(mapping)]
        await self._call(lambda: self._keep(keys=[k.items, k.emb], args=args))
