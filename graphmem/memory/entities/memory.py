"""Entity memory: NER during enrichment, resolution with provenance, relations
with validity in time, and the queries over them.

Resolution keys an entity by tenant + ``TYPE|normalised name``. Variants ("the Eiffel
Tower", "Eiffel Tower", "eiffel tower's") meet at one key; the MENTIONS edge keeps each
exact surface form and how it was resolved (``exact``, ``normalised``, ``alias``,
``split``), and the entity lists its aliases. Every merge can be undone:
``split_surface`` takes a variant back out (and keeps it out), ``merge``/``undo_merge``
join and separate two entities through a SAME_AS edge that queries fold.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from graphmem.cputime import in_thread
from graphmem.domain.models import EventKind, MemoryItem, utcnow
from graphmem.domain.moments import NOW, Moment
from graphmem.enrich.ner import RELATION_TYPES, EntityExtractor, Extraction, display_name, normalise
from graphmem.errors import BadInput, NotFound
from graphmem.stores import ChangeFeed, EntityStore
from graphmem.stores.models import AliasRule, EntityDetail, UserEntity
from graphmem.stores.null import NullBus


class EntityType(StrEnum):
    """Coarse entity types: spaCy's GPE, LOC and FAC are all PLACE (see enrich/ner.py)."""

    PERSON = "PERSON"
    ORGANIZATION = "ORGANIZATION"
    PLACE = "PLACE"
    GROUP = "GROUP"
    PRODUCT = "PRODUCT"
    EVENT = "EVENT"
    WORK = "WORK"
    LAW = "LAW"
    LANGUAGE = "LANGUAGE"


ENTITY_TYPES = tuple(t.value for t in EntityType)
#: A subject holds one of these at a time; a newer fact closes the older edge.
FUNCTIONAL_RELATIONS = frozenset({"LOCATED_IN", "WORKS_FOR"})


#: an entity co-occurs with the entities a memory names next to it, up to this many
#: after it in order of first mention (all of them when it names at most 16)
PAIR_WINDOW = 15
#: CO_OCCURS pairs one memory writes, at most
MAX_PAIRS = 512


def entity_key(entity_type: str, norm: str) -> str:
    return f"{entity_type}|{norm}"


def co_occurring(keys: Sequence[str]) -> list[tuple[str, str]]:
    """The entity pairs a memory naming ``keys`` (in the order it names them) adds to
    CO_OCCURS: every pair when it names at most ``PAIR_WINDOW + 1`` entities; past that,
    each entity with the ones named after it, nearest first, until ``MAX_PAIRS``: a
    memory listing 450 names adds 512 pairs (each name with the next, then with the one
    after that while room remains), not 101,025. Each pair is sorted, and so is the list
    (the order the graph locks them in)."""
    order = list(dict.fromkeys(keys))
    pairs: list[tuple[str, str]] = []
    for gap in range(1, min(PAIR_WINDOW, len(order) - 1) + 1):
        for n in range(len(order) - gap):
            if len(pairs) == MAX_PAIRS:
                return sorted(pairs)
            a, b = order[n], order[n + gap]
            pairs.append((a, b) if a < b else (b, a))
    return sorted(pairs)


class Resolver:
    """Maps a mention to an entity key using the tenant's aliases and splits."""

    def __init__(
        self, table: Sequence[AliasRule], configured: dict[str, str] | None = None
    ) -> None:
        self.aliases = {normalise(a): normalise(c) for a, c in (configured or {}).items()}
        self.aliases.update({r.alias: r.canonical for r in table if r.kind == "alias"})
        self.splits = {r.alias: r.canonical for r in table if r.kind == "split"}

    def resolve(self, surface: str, entity_type: str) -> tuple[str, str]:
        """(key, via)"""
        split = self.splits.get(f"{entity_type}|{surface.strip().lower()}")
        if split:
            return split, "split"
        norm = normalise(surface)
        if norm in self.aliases:
            target = self.aliases[norm]
            # an alias names either an entity (TYPE|name) or just a name (keep the type)
            return (target if "|" in target else entity_key(entity_type, target)), "alias"
        exact = surface.strip().lower() == norm
        return entity_key(entity_type, norm), "exact" if exact else "normalised"


class EntityMemory:
    def __init__(
        self,
        store: EntityStore,
        extractor: EntityExtractor,
        functional: frozenset[str] = FUNCTIONAL_RELATIONS,
        aliases: dict[str, str] | None = None,
        events: ChangeFeed | None = None,
    ) -> None:
        self.store = store
        self.extractor = extractor
        self.functional = functional
        self.aliases = dict(aliases or {})  # configured, for every tenant
        #: the change feed
        self.events: ChangeFeed = events or NullBus()

    async def ingest(self, tenant: str, items: Sequence[MemoryItem]) -> int:
        """Extract entities and relations from spilled memories and write them; returns the
        number of mentions written. Safe to repeat for the same items."""
        return await self.write(tenant, items, await self.extract(items))

    async def extract(
        self, items: Sequence[MemoryItem], budget: float | None = None
    ) -> list[Extraction]:
        """The CPU-bound half (spaCy), in a worker thread: the service runs it beside the
        embedder, so the two use both cores. ``budget``: seconds of NER per item
        (``EntityExtractor.extract``)."""
        if not items:
            return []
        texts = [i.content for i in items]
        return await in_thread(self.extractor.extract, texts, budget)

    async def extract_texts(self, texts: Sequence[str]) -> list[Extraction]:
        return await in_thread(self.extractor.extract, list(texts))

    async def keys_for(self, tenant: str, found: Extraction) -> list[str]:
        """The entity keys a text's mentions resolve to (used to look entities up)."""
        if not found.mentions:
            return []
        resolver = Resolver(await self.store.resolution_table(tenant), self.aliases)
        return sorted({resolver.resolve(m.surface, m.type)[0] for m in found.mentions})

    async def write(
        self, tenant: str, items: Sequence[MemoryItem], extractions: Sequence[Extraction]
    ) -> int:
        """Resolve extracted mentions against the tenant's aliases and write them."""
        if not items:
            return 0
        resolver = Resolver(await self.store.resolution_table(tenant), self.aliases)
        mentions: list[dict[str, Any]] = []
        relations: list[dict[str, Any]] = []
        pairs: list[dict[str, Any]] = []
        for item, found in zip(items, extractions, strict=True):
            keys = []
            for mention in found.mentions:
                key, via = resolver.resolve(mention.surface, mention.type)
                keys.append(key)
                mentions.append(
                    {
                        "memoryId": item.id,
                        "key": key,
                        "name": mention.name,
                        "type": mention.type,
                        "label": mention.label,
                        "surface": mention.surface,
                        "via": via,
                        "start": mention.start,
                        "end": mention.end,
                        "at": item.created_at,
                    }
                )
            for rel in found.relations:
                if rel.type not in RELATION_TYPES or keys[rel.subject] == keys[rel.object]:
                    continue
                relations.append(
                    {
                        "subject": keys[rel.subject],
                        "object": keys[rel.object],
                        "type": rel.type,
                        "memoryId": item.id,
                        "at": item.created_at,
                        "functional": rel.type in self.functional,
                    }
                )
            for a, b in co_occurring(keys):
                pairs.append({"a": a, "b": b, "memoryId": item.id})
        await self.store.write(tenant, mentions, relations, pairs)
        return len(mentions)

    # --- queries -------------------------------------------------------------------------
    async def user_entities(
        self,
        tenant: str,
        user_id: str,
        entity_type: str | None = None,
        limit: int = 50,
        moment: Moment = NOW,
    ) -> list[UserEntity]:
        """The user's entities mentioned by memories seen at ``moment``."""
        if entity_type is not None and entity_type not in ENTITY_TYPES:
            raise BadInput(f"type: one of {', '.join(ENTITY_TYPES)}", field="type")
        if not 1 <= limit <= 1000:
            raise BadInput("limit: must be between 1 and 1000", field="limit")
        return await self.store.user_entities(tenant, user_id, entity_type, limit, moment)

    async def get(self, tenant: str, key: str, moment: Moment = NOW) -> EntityDetail:
        """An entity, its mentions and its relations as seen at ``moment`` (the entity
        itself is found whenever it exists: NOT_FOUND says only that it does not)."""
        found = await self.store.get(tenant, key, moment)
        if found is None:
            raise NotFound(f"no entity {key}", entityId=key)
        return found

    # --- resolution management --------------------------------------------------------------
    async def set_alias(self, tenant: str, alias: str, canonical: str) -> str:
        """Make a name resolve to another (``"NYC"`` → ``"New York City"``) from now on.

        ``canonical`` is an entity id (``PLACE|new york city``) or a name; a name that
        exactly one entity has resolves to that entity, whatever type NER later gives
        the alias. Returns what the alias now resolves to."""
        a = normalise(alias)
        if "|" in canonical:
            await self.get(tenant, canonical)  # NOT_FOUND for an unknown entity
            target = canonical
        else:
            c = normalise(canonical)
            if not c:
                raise BadInput("canonical: a non-empty name is required", field="canonical")
            found = await self.store.find_by_name(tenant, c)
            target = found[0] if len(found) == 1 else c
        if not a or target.rsplit("|", 1)[-1] == a:
            raise BadInput("alias and canonical must be different, non-empty names")
        await self.store.set_alias(tenant, a, target, "alias", utcnow())
        return target

    async def merge(self, tenant: str, source: str, target: str, reason: str = "") -> str:
        if source == target:
            raise BadInput("an entity cannot be merged into itself")
        merge_id = f"merge_{uuid.uuid4().hex}"
        done = await self.store.merge(tenant, source, target, merge_id, reason, utcnow())
        if done is None:
            for key in (source, target):
                await self.get(tenant, key)  # NOT_FOUND names the missing one
            raise BadInput("one of the two entities is already merged into another")
        await self.events.publish(
            tenant, EventKind.ENTITY_MERGED, mergeId=done.merge_id, entityIds=[source, target]
        )
        return done.merge_id

    async def undo_merge(self, tenant: str, merge_id: str) -> tuple[str, str]:
        done = await self.store.undo_merge(tenant, merge_id)
        if done is None:
            raise NotFound(f"no merge {merge_id}", mergeId=merge_id)
        return done.source, done.target

    async def split_surface(self, tenant: str, key: str, surface: str) -> str:
        """Undo a variant merge: mentions written as ``surface`` become their own entity,
        and later mentions written that way resolve to it."""
        entity = await self.get(tenant, key)
        lowered = surface.strip().lower()
        if not any(m.surface.strip().lower() == lowered for m in entity.mentions):
            raise BadInput(f"no mention of {key} is written {surface!r}", field="surface")
        suffix = hashlib.sha1(lowered.encode()).hexdigest()[:8]
        new_key = f"{key}#{suffix}"
        await self.store.set_alias(
            tenant, f"{entity.entity.type}|{lowered}", new_key, "split", utcnow()
        )
        await self.store.split(tenant, key, lowered, new_key, display_name(surface), utcnow())
        await self.store.refresh(tenant, [key, new_key])
        return new_key
