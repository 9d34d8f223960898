"""Search (ranking without side effects) and recall (ranking that counts accesses,
reports matching hot items and promotes what is relevant or recalled often)."""

from __future__ import annotations

import time

import numpy as np

from graphmem.domain.models import EventKind, MemoryItem, RecallResult, ScoredMemory, Tier, utcnow
from graphmem.memory.inputs import RecallQuery
from graphmem.memory.search.ranking import Ranker
from graphmem.memory.search.relevance import scale_of
from graphmem.memory.tiers.promotion import Promotion
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.memory.writepath.enrichment import Enrichment
from graphmem.metrics import Metrics
from graphmem.settings import MemoryConfig
from graphmem.stores import ChangeFeed, GraphStore, HotTier


class Recall:
    def __init__(
        self,
        ranker: Ranker,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        enrichment: Enrichment,
        promotion: Promotion,
        metrics: Metrics,
        events: ChangeFeed,
        changes: ScopeChanges | None = None,
    ) -> None:
        self.ranker = ranker
        self.hot = hot
        self.graph = graph
        self.sessions = sessions
        self.enrichment = enrichment
        self.promotion = promotion
        self.metrics = metrics
        self.events = events
        self.changes = changes or ScopeChanges(None)
        #: the embedder's cosines on the scale the thresholds are written in
        self.relevance = scale_of(ranker.embedder.name)

    async def search(self, tenant: str, q: RecallQuery) -> list[ScoredMemory]:
        """The recall ranking of every tier's memories, without side effects."""
        ranked, _ = await self.ranker.rank(tenant, q)
        return [
            ScoredMemory(item=i, score=s, similarity=self.relevance.of(c)) for i, s, c in ranked
        ]

    async def recall(self, tenant: str, q: RecallQuery) -> RecallResult:
        started = time.perf_counter()
        if q.session_id:
            config = await self.sessions.config(tenant, q.session_id)
        else:
            config = self.sessions.defaults
        # With a user, recall ranks everything the user holds, whichever session it came
        # from: the session is where the agent is now (its hot items are the hot hits).
        scope = q.model_copy(update={"session_id": None}) if q.user_id else q
        ordered, query_vector = await self.ranker.order(tenant, scope)
        # Ranking uses the fused score; relevance, promotion and hits use the cosine on the
        # scale the tier thresholds are written in (``relevance.py``).
        ranking = {turn.id: score for turn, score, _ in ordered}
        scores = {turn.id: self.relevance.of(cosine) for turn, _, cosine in ordered}
        now = utcnow()
        # One statement counts the accesses and reads the items as they are now (a
        # memory deleted since the ranking drops out).
        accessed = {
            item.id: (item, was)
            for item, was in await self.graph.record_access(
                tenant, list(scores.items()), now, config.warm_access_threshold
            )
        }
        # Counting accesses warms a cold memory up now and then: a tier change the
        # scope views must see (the counts themselves are read fresh by every search).
        await self.changes.items(
            tenant, [item for item, was in accessed.values() if item.tier.value != was]
        )
        items = [accessed[t.id][0] for t, _, _ in ordered if t.id in accessed]
        hot_hits = await self._hot_hits(tenant, q, query_vector, config)
        if hot_hits and q.session_id:
            touched = [
                item.model_copy(
                    update={
                        "access_count": item.access_count + 1,
                        "last_accessed_at": now,
                        "relevance_score": (item.relevance_score + score) / 2,
                    }
                )
                for item, score in hot_hits
            ]
            await self.hot.touch(tenant, q.session_id, touched)
            hot_hits = [(t, s) for t, (_, s) in zip(touched, hot_hits, strict=True)]
        promoted: list[str] = []
        if q.auto_promote and config.auto_promote_enabled:
            # A result in the 'hot' tier is a written-behind copy: already in Redis.
            eligible = [
                i
                for i in items
                if i.tier is not Tier.HOT
                and i.retracted_at is None  # a history read's retracted memory stays put
                and (
                    scores[i.id] > config.promote_threshold
                    or (
                        i.access_count >= config.promote_access_count
                        and scores[i.id] >= config.min_relevance
                    )
                )
            ]
            promoted = [i.id for i in await self.promotion.items(tenant, eligible, config)]
        hit = any(s >= config.min_relevance for s in scores.values()) or bool(hot_hits)
        self.metrics.recalled(tenant, 1000 * (time.perf_counter() - started), hit)
        await self.events.publish(
            tenant,
            EventKind.RECALLED,
            sessionId=q.session_id,
            userId=q.user_id,
            itemIds=[i.id for i in items],
            promoted=promoted,
        )
        return RecallResult(
            items=items,
            promoted=promoted,
            scores=[
                ScoredMemory(item=i, score=ranking[i.id], similarity=scores[i.id]) for i in items
            ],
            hot_hits=[ScoredMemory(item=i, score=s, similarity=s) for i, s in hot_hits],
        )

    async def _hot_hits(
        self, tenant: str, q: RecallQuery, query_vector: list[float], config: MemoryConfig
    ) -> list[tuple[MemoryItem, float]]:
        """Hot items of the recall's session that match the query."""
        if q.session_id is None:
            return []
        items = [
            i
            for i in await self.hot.items(tenant, q.session_id)
            if (q.user_id is None or i.user_id == q.user_id) and (not q.types or i.type in q.types)
        ]
        if not items:
            return []
        vectors = await self.enrichment.vectors(tenant, q.session_id, items)
        # an item a worker has yet to embed is left out until it has (its node written
        # behind is found by the ranking meanwhile)
        items = [i for i in items if i.id in vectors]
        if not items:
            return []
        matrix = np.asarray([vectors[i.id] for i in items], dtype=np.float32)
        cosines = matrix @ np.asarray(query_vector, dtype=np.float32)
        scores = [self.relevance.of(float(c)) for c in cosines]
        hits = [
            (item, s) for item, s in zip(items, scores, strict=True) if s >= config.min_relevance
        ]
        return sorted(hits, key=lambda h: h[1], reverse=True)[: q.limit]
