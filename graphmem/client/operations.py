"""Each client method as one GraphQL document, its variables and how to read its data:
written once, run by the sync and the async client alike."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from graphmem.client.models import (
    At,
    Enrichment,
    Episode,
    ImportedTask,
    MemoryItem,
    MemoryPage,
    RecallResult,
    ScoredMemory,
    SpillResult,
    Status,
    Step,
    Task,
    TaskHandle,
    TaskPage,
    UserEntity,
)

T = TypeVar("T")


@dataclass(frozen=True)
class Op(Generic[T]):
    document: str
    variables: dict[str, Any]
    read: Callable[[dict[str, Any]], T]


def _some(**values: Any) -> dict[str, Any]:
    """Variables without the ones left out, so the schema's defaults apply."""
    return {k: v for k, v in values.items() if v is not None}


def memory_input(
    session_id: str,
    content: str,
    *,
    type: str = "MESSAGE",
    user_id: str | None = None,
    metadata: dict[str, Any] | None = None,
    occurred_at: datetime | str | None = None,
) -> dict[str, Any]:
    """One memory for ``add_many``, as ``add`` takes it; ``occurred_at`` (a datetime or
    ISO 8601 text) is when it happened, now by default."""
    when = occurred_at.isoformat() if isinstance(occurred_at, datetime) else occurred_at
    return _some(
        sessionId=session_id,
        content=content,
        type=type,
        userId=user_id,
        metadata=metadata,
        occurredAt=when,
    )


def add(memory: dict[str, Any]) -> Op[MemoryItem]:
    return Op(
        f"mutation($m: AddMemoryInput!) {{ addMemory(input: $m) {{ {MemoryItem.FIELDS} }} }}",
        {"m": memory},
        lambda d: MemoryItem.of(d["addMemory"]),
    )


def add_many(memories: Sequence[dict[str, Any]]) -> Op[list[MemoryItem]]:
    return Op(
        f"mutation($m: [AddMemoryInput!]!) {{ addMemories(inputs: $m) {{ {MemoryItem.FIELDS} }} }}",
        {"m": list(memories)},
        lambda d: [MemoryItem.of(i) for i in d["addMemories"]],
    )


def spill(
    session_id: str,
    count: int | None = None,
    item_ids: Sequence[str] | None = None,
    tier: str | None = None,
) -> Op[SpillResult]:
    return Op(
        "mutation($s: ID!, $c: Int, $i: [ID!], $t: Tier) "
        f"{{ spill(sessionId: $s, count: $c, itemIds: $i, tier: $t) {{ {SpillResult.FIELDS} }} }}",
        _some(s=session_id, c=count, i=list(item_ids) if item_ids is not None else None, t=tier),
        lambda d: SpillResult.of(d["spill"]),
    )


def recall(
    query: str,
    session_id: str | None,
    user_id: str | None,
    limit: int,
    auto_promote: bool,
    at: At | None = None,
) -> Op[RecallResult]:
    moment = (at or At()).variables()
    return Op(
        f"mutation($r: RecallInput!) {{ recall(input: $r) {{ {RecallResult.FIELDS} }} }}",
        {
            "r": _some(
                query=query,
                sessionId=session_id,
                userId=user_id,
                limit=limit,
                autoPromote=auto_promote,
                asOf=moment["asOf"],
                validAt=moment["validAt"],
                includeHistory=moment["hist"],
            )
        },
        lambda d: RecallResult.of(d["recall"]),
    )


def search(
    query: str, session_id: str | None, user_id: str | None, limit: int, at: At | None = None
) -> Op[list[ScoredMemory]]:
    return Op(
        f"query($q: String!, $s: ID, $u: ID, $l: Int!, {At.DECLS}) "
        f"{{ search(query: $q, sessionId: $s, userId: $u, limit: $l, {At.ARGS}) "
        f"{{ {ScoredMemory.FIELDS} }} }}",
        _some(q=query, s=session_id, u=user_id, l=limit, **(at or At()).variables()),
        lambda d: [ScoredMemory.of(s) for s in d["search"]],
    )


def status(session_id: str) -> Op[Status]:
    return Op(
        f"query($s: ID!) {{ memoryStatus(sessionId: $s) {{ {Status.FIELDS} }} }}",
        {"s": session_id},
        lambda d: Status.of(d["memoryStatus"]),
    )


def enrichment() -> Op[Enrichment]:
    return Op(
        f"{{ enrichment {{ {Enrichment.FIELDS} }} }}",
        {},
        lambda d: Enrichment.of(d["enrichment"]),
    )


def forget(item_id: str) -> Op[bool]:
    return Op(
        "mutation($i: ID!) { forget(itemId: $i) }",
        {"i": item_id},
        lambda d: bool(d["forget"]),
    )


def entities(
    user_id: str, type: str | None, limit: int, at: At | None = None
) -> Op[list[UserEntity]]:
    return Op(
        f"query($u: ID!, $t: EntityType, $l: Int!, {At.DECLS}) "
        f"{{ entities(userId: $u, type: $t, limit: $l, {At.ARGS}) {{ {UserEntity.FIELDS} }} }}",
        _some(u=user_id, t=type, l=limit, **(at or At()).variables()),
        lambda d: [UserEntity.of(e) for e in d["entities"]],
    )


def retract(item_ids: Sequence[str], reason: str) -> Op[list[str]]:
    """The ids this call retracted (the others already were)."""
    return Op(
        "mutation($i: [ID!]!, $r: String!) { retract(itemIds: $i, reason: $r) { changedIds } }",
        {"i": list(item_ids), "r": reason},
        lambda d: list(d["retract"]["changedIds"]),
    )


def unretract(item_ids: Sequence[str]) -> Op[list[str]]:
    """The ids this call made held again (the others were not retracted)."""
    return Op(
        "mutation($i: [ID!]!) { unretract(itemIds: $i) { changedIds } }",
        {"i": list(item_ids)},
        lambda d: list(d["unretract"]["changedIds"]),
    )


def create_task(description: str, owner: str | None) -> Op[Task]:
    return Op(
        "mutation($d: String!, $o: String) "
        f"{{ createTask(description: $d, owner: $o) {{ {Task.FIELDS} }} }}",
        _some(d=description, o=owner),
        lambda d: Task.of(d["createTask"]),
    )


def add_step(
    task_id: str,
    action: str,
    result: str | None,
    status: str,
    owner: str | None,
    generation: int | None,
) -> Op[Step]:
    return Op(
        "mutation($t: ID!, $s: StepInput!, $o: String, $g: Int) "
        f"{{ addStep(taskId: $t, input: $s, owner: $o, generation: $g) {{ {Step.FIELDS} }} }}",
        _some(
            t=task_id, s=_some(action=action, result=result, status=status), o=owner, g=generation
        ),
        lambda d: Step.of(d["addStep"]),
    )


def transfer_task(
    task_id: str, to_owner: str, generation: int, from_owner: str | None, reason: str
) -> Op[TaskHandle]:
    return Op(
        "mutation($t: ID!, $to: String!, $g: Int!, $f: String, $r: String!) "
        "{ transferTask(taskId: $t, toOwner: $to, generation: $g, fromOwner: $f, reason: $r) "
        f"{{ {TaskHandle.FIELDS} }} }}",
        _some(t=task_id, to=to_owner, g=generation, f=from_owner, r=reason),
        lambda d: TaskHandle.of(d["transferTask"]),
    )


def record_episode(episode: dict[str, Any]) -> Op[Episode]:
    return Op(
        f"mutation($i: EpisodeInput!) {{ recordEpisode(input: $i) {{ {Episode.FIELDS} }} }}",
        {"i": episode},
        lambda d: Episode.of(d["recordEpisode"]),
    )


def task(task_id: str) -> Op[Task]:
    return Op(
        f"query($t: ID!) {{ task(id: $t) {{ {Task.FIELDS} }} }}",
        {"t": task_id},
        lambda d: Task.of(d["task"]),
    )


def complete_task(task_id: str, status: str) -> Op[Task]:
    return Op(
        "mutation($t: ID!, $s: String!) "
        f"{{ completeTask(taskId: $t, status: $s) {{ {Task.FIELDS} }} }}",
        {"t": task_id, "s": status},
        lambda d: Task.of(d["completeTask"]),
    )


def owned_tasks(owner: str, first: int, after: str | None) -> Op[TaskPage]:
    return Op(
        "query($o: String!, $n: Int!, $a: String) "
        f"{{ tasks(owner: $o, first: $n, after: $a) {{ {TaskPage.FIELDS} }} }}",
        _some(o=owner, n=first, a=after),
        lambda d: TaskPage.of(d["tasks"]),
    )


def import_task(task: dict[str, Any]) -> Op[ImportedTask]:
    return Op(
        f"mutation($i: TaskImportInput!) {{ importTask(input: $i) {{ {ImportedTask.FIELDS} }} }}",
        {"i": task},
        lambda d: ImportedTask.of(d["importTask"]),
    )


def memories(
    session_id: str | None,
    user_id: str | None,
    metadata_field: str | None,
    metadata_values: Sequence[Any] | None,
    first: int,
    after: str | None,
    at: At | None = None,
) -> Op[MemoryPage]:
    return Op(
        f"query($s: ID, $u: ID, $f: String, $v: [JSON!], $n: Int!, $a: String, {At.DECLS}) "
        "{ memories(sessionId: $s, userId: $u, metadataField: $f, metadataValues: $v, "
        f"first: $n, after: $a, {At.ARGS}) {{ {MemoryPage.FIELDS} }} }}",
        _some(
            s=session_id,
            u=user_id,
            f=metadata_field,
            v=list(metadata_values) if metadata_values is not None else None,
            n=first,
            a=after,
            **(at or At()).variables(),
        ),
        lambda d: MemoryPage.of(d["memories"]),
    )


def sessions(prefix: str, user_id: str | None, first: int, after: str | None) -> Op[list[str]]:
    return Op(
        "query($p: String!, $u: ID, $n: Int!, $a: String) "
        "{ sessions(prefix: $p, userId: $u, first: $n, after: $a) }",
        _some(p=prefix, u=user_id, n=first, a=after),
        lambda d: [str(s) for s in d["sessions"]],
    )
