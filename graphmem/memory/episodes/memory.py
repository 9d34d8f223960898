"""Episodic memory: episodes with outcome, structure signature, lessons and metrics;
similar episodes; prior knowledge by similarity-weighted voting; reflections across
episodes. ``EpisodicMemory`` is the whole capability: it builds on tasks with ordered
steps and hand-overs (``tasks.py``) and on a user's tasks exported and imported
(``exports.py``).

The voting and pattern finding are pure functions over plain data (``patterns.py``), so
their results can be checked by hand; ``EpisodicMemory`` wires them to the graph and the
embedder.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from graphmem.cputime import in_thread
from graphmem.domain.models import EmbeddingSpace, utcnow
from graphmem.domain.moments import NOW, Moment
from graphmem.enrich.embed import Embedder, embed_queries
from graphmem.errors import BadInput, NotFound
from graphmem.memory.episodes.exports import TaskExports, episode_text
from graphmem.memory.episodes.patterns import (
    StaleFilter,
    StepStatus,
    Vote,
    aggregate_votes,
    compute_signature,
    find_patterns,
)
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.search.relevance import scale_of
from graphmem.memory.tiers.quota import UNLIMITED, Quota, charged, text_bytes
from graphmem.stores import ChangeFeed, EpisodeStore
from graphmem.stores.models import Episode, EpisodeSteps, Reflection, ScoredEpisode

if TYPE_CHECKING:
    from graphmem.memory.writepath.spaces import TenantSpaces

#: added to the similarity of an episode whose structure signature matches exactly
SIGNATURE_BOOST = 0.6


class EpisodicMemory(TaskExports):
    def __init__(
        self,
        store: EpisodeStore,
        embedder: Embedder,
        stale_filter: StaleFilter | None = None,
        *,
        events: ChangeFeed | None = None,
        working: WorkingMemory | None = None,
        quota: Quota = UNLIMITED,
        spaces: TenantSpaces | None = None,
    ) -> None:
        super().__init__(store, embedder, events=events, working=working, quota=quota)
        self.stale_filter = stale_filter
        #: which model's vectors each tenant holds
        self.spaces = spaces

    async def _embed_query(self, text: str) -> list[float]:
        (vector,) = await in_thread(embed_queries, self.embedder, [text])
        embedded: list[float] = vector.tolist()
        return embedded

    async def record_episode(
        self,
        tenant: str,
        *,
        outcome: str,
        success: bool,
        task_id: str | None = None,
        description: str | None = None,
        steps: Sequence[dict[str, Any]] = (),
        signature: str | None = None,
        structure: Iterable[str] | dict[str, Any] | None = None,
        lessons: Sequence[str] = (),
        metrics: dict[str, Any] | None = None,
        mappings: dict[str, str] | None = None,
        owner: str | None = None,
        generation: int | None = None,
    ) -> Episode:
        if signature is None and structure is not None:
            signature = compute_signature(structure)
        # Every check before the first write: an episode refused after its task or steps
        # were written would leave them behind.
        for step in steps:
            if not str(step.get("action") or "").strip():
                raise BadInput("action: must not be empty", field="action")
            if step.get("status", StepStatus.SUCCEEDED) not in set(StepStatus):
                raise BadInput("status: not a step status", field="status")
        if task_id is None and (not description or not description.strip()):
            raise BadInput("give a taskId, or a description to start a task with")
        # The episode, its new task and its steps are charged at once: refused before
        # any of them is written.
        new_task = task_id is None
        items = 1 + len(steps) + new_task
        size = text_bytes(
            description if new_task else None,
            *(str(step.get("action") or "") for step in steps),
            *(step.get("result") for step in steps),
            episode_text(description, outcome, lessons, metrics, mappings),
        )
        async with charged(self.quota, tenant, items, size):
            if task_id is None:
                assert description is not None
                task_id = (await self.create_task(tenant, description)).id
            else:
                task = await self.task(tenant, task_id)
                description = description or task.task.description
            for step in steps:
                await self.add_step(
                    tenant,
                    task_id,
                    step["action"],
                    step.get("result"),
                    StepStatus(step.get("status", StepStatus.SUCCEEDED)),
                    owner=owner,
                    generation=generation,
                )
            text = " ".join([description or "", outcome, *lessons])
            episode = await self.store.record_episode(
                tenant,
                {
                    "id": f"ep_{uuid.uuid4().hex}",
                    "taskId": task_id,
                    "description": description,
                    "outcome": outcome,
                    "success": success,
                    "signature": signature,
                    "lessons": list(lessons),
                    "metrics": json.dumps(metrics or {}),
                    "mappings": json.dumps(mappings or {}),
                    "now": utcnow(),
                    "embedding": await self._embed(text),
                    "model": self.embedder.name,
                },
            )
        if episode is None:  # the task was forgotten meanwhile (its tombstone)
            raise NotFound(f"no task {task_id}", taskId=task_id)
        return episode

    async def similar(
        self,
        tenant: str,
        query: str,
        signature: str | None = None,
        limit: int = 5,
        moment: Moment = NOW,
    ) -> list[ScoredEpisode]:
        """``moment``: episodes recorded by its ``as_of`` that happened by its
        ``valid_at`` (docs/concepts.md, "Two clocks")."""
        if not query.strip():
            raise BadInput("query: must not be empty", field="query")
        if not 1 <= limit <= 100:
            raise BadInput("limit: must be between 1 and 100", field="limit")
        if self.spaces is not None:
            await self.spaces.require(tenant)
        scale = scale_of(self.embedder.name)
        return await self.store.similar(
            tenant,
            await self._embed_query(query),
            signature,
            SIGNATURE_BOOST,
            limit,
            EmbeddingSpace.of(self.embedder),
            moment,
            (scale.floor, scale.ceiling),
        )

    async def prior_knowledge(
        self,
        tenant: str,
        query: str,
        signature: str | None = None,
        limit: int = 5,
        valid_values: Sequence[str] | None = None,
        moment: Moment = NOW,
    ) -> tuple[list[Vote], list[ScoredEpisode]]:
        """Similar episodes vote on each mapping; stale values (not in ``valid_values``, or
        rejected by the configured hook) are filtered out before the vote. At a moment,
        only the episodes seen then vote (the votes are counted at each read, never
        stored, so they are what those episodes said)."""
        rows = await self.similar(tenant, query, signature, limit, moment)
        allowed = set(valid_values) if valid_values is not None else None
        hook = self.stale_filter

        def keep(key: str, value: str) -> bool:
            return (allowed is None or value in allowed) and (hook is None or hook(key, value))

        votes = aggregate_votes([(r.episode.mappings, r.similarity) for r in rows], keep)
        return votes, rows

    async def reflect(self, tenant: str, signature: str | None = None) -> list[Reflection]:
        items = [_plain(item) for item in await self.store.with_steps(tenant, signature)]
        found = [(p, json.dumps(p.details)) for p in find_patterns(items)]
        stored = []
        # Reflections found again update those stored, charged until the next exact count.
        size = text_bytes(*(p.pattern for p, _ in found), *(d for _, d in found))
        async with charged(self.quota, tenant, len(found), size):
            for p, details in found:
                # None: drawn from an episode forgotten since it was read.
                kept = await self.store.upsert_reflection(
                    tenant,
                    {
                        "key": p.key,
                        "id": f"refl_{p.key[:16]}",
                        "kind": p.kind,
                        "pattern": p.pattern,
                        "support": p.support,
                        "confidence": p.confidence,
                        "signature": p.signature,
                        "details": details,
                        "evidence": p.evidence,
                        "now": utcnow(),
                    },
                )
                if kept is not None:
                    stored.append(kept)
        return stored

    async def reflections(
        self, tenant: str, kind: str | None = None, signature: str | None = None
    ) -> list[Reflection]:
        return await self.store.reflections(tenant, kind, signature)


def _plain(item: EpisodeSteps) -> dict[str, Any]:
    """The plain-data shape ``find_patterns`` reads: ``{"episode": {...}, "steps": [...]}``."""
    return {"episode": item.episode.model_dump(), "steps": [s.model_dump() for s in item.steps]}
