"""Episodic memory (seeds 002 and 003): tasks with ordered steps, episodes with outcome,
structure signature, lessons and metrics; similar episodes; prior knowledge by
similarity-weighted voting; reflections across episodes.

The voting and pattern finding are pure functions over plain data, so their results
can be checked by hand; ``EpisodicMemory`` wires them to the graph and the embedder.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .enrich.embed import Embedder
from .errors import BadInput, Forbidden, NotFound
from .events import EventBus, EventKind, NullBus
from .models import utcnow
from .tiers.episodes import EpisodeStore
from .working import WorkingMemory

#: seed 002: "Exact structure matches get 0.6 similarity boost"
SIGNATURE_BOOST = 0.6

#: (key, value) → keep? Seed 002's stale-mapping filter ("columns that no longer exist").
StaleFilter = Callable[[str, str], bool]


class StepStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


def compute_signature(structure: Iterable[str] | dict[str, Any]) -> str:
    """A structure signature in the spirit of seed 002's file signature: a short hash of
    the sorted, lower-cased names (columns, keys, fields) that describe the input."""
    names = structure.keys() if isinstance(structure, dict) else structure
    parts = sorted({str(n).strip().lower() for n in names if str(n).strip()})
    if not parts:
        raise BadInput("structure: at least one name is required", field="structure")
    return hashlib.md5(":".join(parts).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Vote:
    key: str
    value: str
    confidence: float
    votes: float
    alternatives: dict[str, float]


def aggregate_votes(
    episodes: Sequence[tuple[dict[str, str], float]], keep: StaleFilter | None = None
) -> list[Vote]:
    """Seed 002's ``_aggregate_mappings``: for every key, each episode votes for its value
    with its similarity; the winner is the value with the highest total, and its
    confidence is its share of all the votes cast for that key."""
    tally: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for mappings, similarity in episodes:
        if similarity <= 0:
            continue  # an unrelated episode has no say
        for key, value in mappings.items():
            if keep is not None and not keep(key, value):
                continue
            tally[key][value] += similarity
    result = []
    for key in sorted(tally):
        options = tally[key]
        winner = max(sorted(options), key=lambda v: options[v])
        total = sum(options.values())
        result.append(Vote(key, winner, options[winner] / total, options[winner], dict(options)))
    return result


def _norm_action(action: str) -> str:
    return re.sub(r"\s+", " ", action.strip().lower())


@dataclass
class Pattern:
    kind: str
    pattern: str
    support: int
    confidence: float
    evidence: list[str]
    signature: str | None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        raw = f"{self.kind}|{self.signature or '*'}|{self.pattern}"
        return hashlib.sha1(raw.encode()).hexdigest()


def find_patterns(episodes: Sequence[dict[str, Any]]) -> list[Pattern]:
    """Cross-episode patterns. Each item: ``{"episode": {...}, "steps": [{...}]}``.

    - ``recovery``: a step that failed, followed in the same task by a step that
      succeeded — the alternative that worked;
    - ``repeated_failure``: an action that failed in two or more episodes;
    - ``success_rate``: per structure signature, with two or more episodes;
    - ``summary``: per signature (or all unsigned episodes), one consolidated lesson
      naming what failed, what worked instead and what went well, derived from every
      episode of the group.
    """
    patterns: list[Pattern] = []
    groups: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    recoveries: dict[tuple[str | None, str, str], list[str]] = defaultdict(list)
    failures: dict[tuple[str | None, str], set[str]] = defaultdict(set)
    labels: dict[str, str] = {}
    for item in episodes:
        episode, steps = item["episode"], sorted(item["steps"], key=lambda s: s["order"])
        signature = episode.get("signature")
        groups[signature].append(item)
        failed_open: list[dict[str, Any]] = []
        for step in steps:
            action = _norm_action(step["action"])
            labels.setdefault(action, step["action"].strip())
            if step["status"] == StepStatus.FAILED:
                failed_open.append(step)
                failures[(signature, action)].add(episode["id"])
            elif step["status"] == StepStatus.SUCCEEDED and failed_open:
                for failed_step in failed_open:
                    key = (signature, _norm_action(failed_step["action"]), action)
                    if episode["id"] not in recoveries[key]:
                        recoveries[key].append(episode["id"])
                failed_open = []
    for (signature, failed, alternative), proof in recoveries.items():
        total = len(groups[signature])
        patterns.append(
            Pattern(
                "recovery",
                f"after '{labels[failed]}' failed, '{labels[alternative]}' succeeded",
                len(proof),
                len(proof) / total,
                proof,
                signature,
                {"failedAction": labels[failed], "alternative": labels[alternative]},
            )
        )
    for (signature, action), failed_in in failures.items():
        if len(failed_in) >= 2:
            total = len(groups[signature])
            patterns.append(
                Pattern(
                    "repeated_failure",
                    f"'{labels[action]}' keeps failing",
                    len(failed_in),
                    len(failed_in) / total,
                    sorted(failed_in),
                    signature,
                    {"action": labels[action]},
                )
            )
    for signature, items in groups.items():
        ids = [i["episode"]["id"] for i in items]
        succeeded = sum(1 for i in items if i["episode"].get("success"))
        if signature is not None and len(items) >= 2:
            patterns.append(
                Pattern(
                    "success_rate",
                    f"{succeeded} of {len(items)} episodes with signature {signature} succeeded",
                    len(items),
                    succeeded / len(items),
                    ids,
                    signature,
                    {"succeeded": succeeded, "episodes": len(items)},
                )
            )
        patterns.append(_summary(signature, items, recoveries, labels))
    return patterns


def _summary(
    signature: str | None,
    items: Sequence[dict[str, Any]],
    recoveries: dict[tuple[str | None, str, str], list[str]],
    labels: dict[str, str],
) -> Pattern:
    ids = [i["episode"]["id"] for i in items]
    succeeded = sum(1 for i in items if i["episode"].get("success"))
    parts = [f"across {len(items)} episodes, {succeeded} succeeded"]
    recovered = [(f, a) for (s, f, a) in recoveries if s == signature]
    for failed, alternative in recovered:
        parts.append(f"'{labels[failed]}' failed and '{labels[alternative]}' worked instead")
    went_well = [
        f"{i['episode'].get('outcome')}"
        for i in items
        if i["episode"].get("success") and i["episode"].get("outcome")
    ]
    if went_well:
        parts.append("went well: " + "; ".join(sorted(set(went_well))))
    lessons = sorted({lesson for i in items for lesson in i["episode"].get("lessons") or []})
    return Pattern(
        "summary",
        "; ".join(parts),
        len(items),
        succeeded / len(items),
        ids,
        signature,
        {
            "lessons": lessons,
            "recoveries": [
                {"failedAction": labels[f], "alternative": labels[a]} for f, a in recovered
            ],
        },
    )


class EpisodicMemory:
    def __init__(
        self, store: EpisodeStore, embedder: Embedder, stale_filter: StaleFilter | None = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.stale_filter = stale_filter
        #: the change feed and the tasks' working memory; the Memory facade connects them
        self.events: EventBus | NullBus = NullBus()
        self.working: WorkingMemory | None = None

    async def _embed(self, text: str) -> list[float]:
        (vector,) = await asyncio.to_thread(self.embedder.embed, [text])
        embedded: list[float] = vector.tolist()
        return embedded

    # --- tasks and steps -----------------------------------------------------------------
    async def create_task(
        self, tenant: str, description: str, owner: str | None = None, task_id: str | None = None
    ) -> dict[str, Any]:
        if not description.strip():
            raise BadInput("description: must not be empty", field="description")
        task_id = task_id or f"task_{uuid.uuid4().hex}"
        return await self.store.create_task(
            tenant, task_id, description, owner, await self._embed(description), utcnow()
        )

    async def add_step(
        self,
        tenant: str,
        task_id: str,
        action: str,
        result: str | None = None,
        status: StepStatus = StepStatus.SUCCEEDED,
        started_at: Any = None,
        ended_at: Any = None,
        owner: str | None = None,
        generation: int | None = None,
    ) -> dict[str, Any]:
        """Append a step. A task with an owner only takes steps from the handle
        (owner, generation) that is current: seed 001's transfer state."""
        if not action.strip():
            raise BadInput("action: must not be empty", field="action")
        now = utcnow()
        step = await self.store.add_step(
            tenant,
            task_id,
            {
                "id": f"step_{uuid.uuid4().hex}",
                "action": action,
                "result": result,
                "status": StepStatus(status).value,
                "startedAt": started_at or now,
                "endedAt": ended_at or now,
                "owner": owner,
                "generation": generation,
            },
        )
        if step is None:
            task = (await self.task(tenant, task_id))["task"]  # NOT_FOUND when missing
            raise _stale(task_id, task["owner"], task["generation"], owner, generation)
        return step

    async def transfer(
        self,
        tenant: str,
        task_id: str,
        from_owner: str | None,
        generation: int,
        to_owner: str,
        reason: str = "",
    ) -> dict[str, Any]:
        """Hand the task on: only the current handle may, the generation goes up by one and
        the hand-over joins the task's audit trail. Of concurrent transfers, one wins."""
        if not to_owner.strip():
            raise BadInput("toOwner: must not be empty", field="toOwner")
        done = await self.store.transfer(
            tenant,
            task_id,
            {
                "fromOwner": from_owner,
                "toOwner": to_owner,
                "generation": generation,
                "reason": reason,
                "id": f"xfer_{uuid.uuid4().hex}",
                "now": utcnow(),
            },
        )
        if done is None:
            raise NotFound(f"no task {task_id}", taskId=task_id)
        if not done["moved"]:
            raise _stale(task_id, done["owner"], done["generation"], from_owner, generation)
        await self.events.publish(
            tenant,
            EventKind.TASK_TRANSFERRED,
            taskId=task_id,
            fromOwner=from_owner,
            toOwner=done["owner"],
            generation=done["generation"],
        )
        return {"owner": done["owner"], "generation": done["generation"]}

    async def transfers(self, tenant: str, task_id: str) -> list[dict[str, Any]]:
        await self.task(tenant, task_id)  # NOT_FOUND for an unknown task
        return await self.store.transfers(tenant, task_id)

    async def complete_task(self, tenant: str, task_id: str, status: str) -> dict[str, Any]:
        task = await self.store.complete_task(tenant, task_id, status, utcnow())
        if task is None:
            raise NotFound(f"no task {task_id}", taskId=task_id)
        if self.working is not None:
            self.working.clear(tenant, task_id)  # a finished task's scratch pad is done
        return task

    async def task(self, tenant: str, task_id: str) -> dict[str, Any]:
        found = await self.store.get_task(tenant, task_id)
        if found is None:
            raise NotFound(f"no task {task_id}", taskId=task_id)
        found["steps"] = sorted(found["steps"], key=lambda s: s["order"])
        return found

    # --- episodes ----------------------------------------------------------------------------
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
    ) -> dict[str, Any]:
        if signature is None and structure is not None:
            signature = compute_signature(structure)
        if task_id is None:
            if not description:
                raise BadInput("give a taskId, or a description to start a task with")
            task_id = (await self.create_task(tenant, description))["id"]
        else:
            task = await self.task(tenant, task_id)
            description = description or task["task"]["description"]
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
            },
        )
        assert episode is not None  # the task exists: it was found or created above
        return _decode(episode)

    async def similar(
        self, tenant: str, query: str, signature: str | None = None, limit: int = 5
    ) -> list[dict[str, Any]]:
        if not query.strip():
            raise BadInput("query: must not be empty", field="query")
        if not 1 <= limit <= 100:
            raise BadInput("limit: must be between 1 and 100", field="limit")
        rows = await self.store.similar(
            tenant, await self._embed(query), signature, SIGNATURE_BOOST, limit
        )
        for row in rows:
            row["episode"] = _decode(row["episode"])
        return rows

    async def prior_knowledge(
        self,
        tenant: str,
        query: str,
        signature: str | None = None,
        limit: int = 5,
        valid_values: Sequence[str] | None = None,
    ) -> tuple[list[Vote], list[dict[str, Any]]]:
        """Similar episodes vote on each mapping; stale values (not in ``valid_values``, or
        rejected by the configured hook) are filtered out before the vote."""
        rows = await self.similar(tenant, query, signature, limit)
        allowed = set(valid_values) if valid_values is not None else None
        hook = self.stale_filter

        def keep(key: str, value: str) -> bool:
            return (allowed is None or value in allowed) and (hook is None or hook(key, value))

        votes = aggregate_votes([(r["episode"]["mappings"], r["similarity"]) for r in rows], keep)
        return votes, rows

    async def reflect(self, tenant: str, signature: str | None = None) -> list[dict[str, Any]]:
        items = await self.store.with_steps(tenant, signature)
        for item in items:
            item["episode"] = _decode(item["episode"])
        stored = []
        for p in find_patterns(items):
            stored.append(
                await self.store.upsert_reflection(
                    tenant,
                    {
                        "key": p.key,
                        "id": f"refl_{p.key[:16]}",
                        "kind": p.kind,
                        "pattern": p.pattern,
                        "support": p.support,
                        "confidence": p.confidence,
                        "signature": p.signature,
                        "details": json.dumps(p.details),
                        "evidence": p.evidence,
                        "now": utcnow(),
                    },
                )
            )
        return [_decode_reflection(r) for r in stored]

    async def reflections(
        self, tenant: str, kind: str | None = None, signature: str | None = None
    ) -> list[dict[str, Any]]:
        return [
            _decode_reflection(r) for r in await self.store.reflections(tenant, kind, signature)
        ]


def _stale(
    task_id: str, owner: Any, generation: Any, held_owner: Any, held_generation: Any
) -> Forbidden:
    return Forbidden(
        f"task {task_id} is owned by {owner!r} at generation {generation}; the handle "
        f"({held_owner!r}, generation {held_generation}) is stale",
        owner=owner,
        generation=generation,
    )


def _decode(episode: dict[str, Any]) -> dict[str, Any]:
    episode = dict(episode)
    episode.pop("embedding", None)
    episode["metrics"] = json.loads(episode.get("metrics") or "{}")
    episode["mappings"] = json.loads(episode.get("mappings") or "{}")
    return episode


def _decode_reflection(reflection: dict[str, Any]) -> dict[str, Any]:
    reflection = dict(reflection)
    reflection["details"] = json.loads(reflection.get("details") or "{}")
    return reflection
