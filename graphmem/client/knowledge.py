"""Episodes' prior knowledge and structured records through the API, for both clients,
each read at a moment as the memory reads are (``at=At(...)``; docs/concepts.md, "Two
clocks")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from graphmem.client.models import At, ScoredEpisode, _time
from graphmem.client.operations import Op, _some

T = TypeVar("T")


@dataclass(frozen=True)
class MappingVote:
    """The winning value of one mapping key, by similarity-weighted votes."""

    key: str
    value: str
    #: the winner's share of the votes, 0-1
    confidence: float
    votes: float
    #: every value with its vote total
    alternatives: dict[str, float]

    FIELDS = "key value confidence votes alternatives"

    @classmethod
    def of(cls, d: dict[str, Any]) -> MappingVote:
        return cls(d["key"], d["value"], d["confidence"], d["votes"], d["alternatives"] or {})


@dataclass(frozen=True)
class PriorKnowledge:
    votes: list[MappingVote]
    #: the episodes that voted, most similar first
    episodes: list[ScoredEpisode]

    FIELDS = f"votes {{ {MappingVote.FIELDS} }} episodes {{ {ScoredEpisode.FIELDS} }}"

    @classmethod
    def of(cls, d: dict[str, Any]) -> PriorKnowledge:
        return cls(
            [MappingVote.of(v) for v in d["votes"]],
            [ScoredEpisode.of(e) for e in d["episodes"]],
        )


@dataclass(frozen=True)
class StructuredRecord:
    id: str
    schema: str
    data: dict[str, Any]
    created_at: datetime | None
    #: record time: when graphmem stored it (a valid time, if any, is in ``data``)
    recorded_at: datetime | None

    FIELDS = "id schema data createdAt recordedAt"

    @classmethod
    def of(cls, d: dict[str, Any]) -> StructuredRecord:
        return cls(
            d["id"], d["schema"], d["data"], _time(d.get("createdAt")), _time(d.get("recordedAt"))
        )


def similar_episodes(
    query: str, signature: str | None, limit: int, at: At | None = None
) -> Op[list[ScoredEpisode]]:
    return Op(
        f"query($q: String!, $s: String, $l: Int!, {At.DECLS}) "
        f"{{ similarEpisodes(query: $q, signature: $s, limit: $l, {At.ARGS}) "
        f"{{ {ScoredEpisode.FIELDS} }} }}",
        {**_some(q=query, s=signature, l=limit), **(at or At()).variables()},
        lambda d: [ScoredEpisode.of(e) for e in d["similarEpisodes"]],
    )


def prior_knowledge(
    query: str,
    signature: str | None,
    limit: int,
    valid_values: Sequence[str] | None,
    at: At | None = None,
) -> Op[PriorKnowledge]:
    return Op(
        f"query($q: String!, $s: String, $l: Int!, $v: [String!], {At.DECLS}) "
        f"{{ priorKnowledge(query: $q, signature: $s, limit: $l, validValues: $v, {At.ARGS}) "
        f"{{ {PriorKnowledge.FIELDS} }} }}",
        {
            **_some(q=query, s=signature, l=limit),
            "v": list(valid_values) if valid_values is not None else None,
            **(at or At()).variables(),
        },
        lambda d: PriorKnowledge.of(d["priorKnowledge"]),
    )


def records(
    schema: str, where: dict[str, Any] | None, limit: int, at: At | None = None
) -> Op[list[StructuredRecord]]:
    moment = at or At()
    if moment.valid_at is not None or moment.include_history:
        # records are never changed or retracted: record time is all a moment asks of them
        raise ValueError("records: only at=At(as_of=...) applies")
    return Op(
        "query($n: String!, $w: JSON, $l: Int!, $asOf: DateTime) "
        f"{{ records(schema: $n, where: $w, limit: $l, asOf: $asOf) "
        f"{{ {StructuredRecord.FIELDS} }} }}",
        {"n": schema, "w": where, "l": limit, "asOf": moment.variables()["asOf"]},
        lambda d: [StructuredRecord.of(r) for r in d["records"]],
    )


class KnowledgeCalls:
    """The blocking client's reads of episodes and records (``Graphmem`` has them)."""

    def _run(self, op: Op[T]) -> T:
        raise NotImplementedError

    def similar_episodes(
        self, query: str, *, signature: str | None = None, limit: int = 5, at: At | None = None
    ) -> list[ScoredEpisode]:
        """``at``: only the episodes recorded by ``as_of`` that happened by ``valid_at``."""
        return self._run(similar_episodes(query, signature, limit, at))

    def prior_knowledge(
        self,
        query: str,
        *,
        signature: str | None = None,
        limit: int = 5,
        valid_values: Sequence[str] | None = None,
        at: At | None = None,
    ) -> PriorKnowledge:
        """What similar episodes chose, by vote; ``at``: only the episodes seen then vote."""
        return self._run(prior_knowledge(query, signature, limit, valid_values, at))

    def records(
        self,
        schema: str,
        *,
        where: dict[str, Any] | None = None,
        limit: int = 50,
        at: At | None = None,
    ) -> list[StructuredRecord]:
        """Records of ``schema`` whose fields equal ``where``, newest first; ``at``: only
        ``as_of`` applies (those stored by then)."""
        return self._run(records(schema, where, limit, at))


class AsyncKnowledgeCalls:
    """The asyncio client's reads of episodes and records (``AsyncGraphmem`` has them)."""

    async def _run(self, op: Op[T]) -> T:
        raise NotImplementedError

    async def similar_episodes(
        self, query: str, *, signature: str | None = None, limit: int = 5, at: At | None = None
    ) -> list[ScoredEpisode]:
        """``at``: only the episodes recorded by ``as_of`` that happened by ``valid_at``."""
        return await self._run(similar_episodes(query, signature, limit, at))

    async def prior_knowledge(
        self,
        query: str,
        *,
        signature: str | None = None,
        limit: int = 5,
        valid_values: Sequence[str] | None = None,
        at: At | None = None,
    ) -> PriorKnowledge:
        """What similar episodes chose, by vote; ``at``: only the episodes seen then vote."""
        return await self._run(prior_knowledge(query, signature, limit, valid_values, at))

    async def records(
        self,
        schema: str,
        *,
        where: dict[str, Any] | None = None,
        limit: int = 50,
        at: At | None = None,
    ) -> list[StructuredRecord]:
        """Records of ``schema`` whose fields equal ``where``, newest first; ``at``: only
        ``as_of`` applies (those stored by then)."""
        return await self._run(records(schema, where, limit, at))
