"""What a request may ask: the input models and the bounds checked before any work."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from graphmem import jsonscan
from graphmem.domain.models import MemoryItem, MemoryType, Tier, as_utc
from graphmem.domain.moments import NOW, Moment
from graphmem.errors import BadInput
from graphmem.memory.search.fusion import Retriever
from graphmem.settings import ID_PATTERN


class Limits(BaseModel):
    """Input bounds; requests outside them get BAD_INPUT instead of doing the work."""

    model_config = ConfigDict(frozen=True)

    max_content_chars: int = 20_000
    max_batch_items: int = 500
    max_limit: int = 100
    max_metadata_bytes: int = 16_384
    max_metadata_depth: int = 32
    max_query_chars: int = 2_000


def check_id(value: str | None, field: str) -> str | None:
    if value is not None and not ID_PATTERN.fullmatch(value):
        raise ValueError(f"{field} must be 1-128 characters of A-Z a-z 0-9 _ . @ -")
    return value


class AddMemory(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str
    user_id: str | None = None
    content: str
    type: MemoryType = MemoryType.MESSAGE
    metadata: dict[str, Any] = Field(default_factory=dict)
    occurred_at: datetime | None = None

    @field_validator("occurred_at")
    @classmethod
    def _utc(cls, v: datetime | None) -> datetime | None:
        return None if v is None else as_utc(v)

    @field_validator("session_id")
    @classmethod
    def _session(cls, v: str) -> str:
        check_id(v, "sessionId")
        return v

    @field_validator("user_id")
    @classmethod
    def _user(cls, v: str | None) -> str | None:
        return check_id(v, "userId")


#: what search ranks by default: every graph node, the warm and cold memories and the
#: 'hot' copies of items still in Redis (written behind, or promoted), so an item is
#: findable whatever its tier
SEARCH_TIERS = (Tier.HOT, Tier.WARM, Tier.COLD)


class RecallQuery(BaseModel):
    session_id: str | None = None
    user_id: str | None = None
    query: str
    limit: int = 3
    auto_promote: bool = True
    types: list[MemoryType] | None = None
    retriever: Retriever = Retriever.HYBRID
    #: the graph tiers searched (recall also matches the session's hot items apart)
    tiers: list[Tier] = Field(default_factory=lambda: list(SEARCH_TIERS))
    #: what the search sees: what graphmem held at a moment, of what was true at one
    #: (``domain/moments.py``); by default what it holds now
    moment: Moment = NOW


def text_problem(value: str) -> str | None:
    """Why a string cannot be stored, or None: Redis and Neo4j take UTF-8, which has no
    lone surrogates, and NUL characters break the tools people read the graph with."""
    if "\x00" in value:
        return "must not contain NUL characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode (no lone surrogates)"
    return None


def json_problem(value: Any, max_depth: int, *, numbers: bool = True) -> str | None:
    """Why a JSON value cannot be stored (too deep, a bad string or key, and with
    ``numbers`` a number the stores cannot hold), or None. Read from the value's JSON
    text at C speed (``jsonscan``); only a value that may hold a problem is walked."""
    text = jsonscan.dumped(value)
    if (
        text is not None
        and jsonscan.plain_texts(text)
        and (not numbers or jsonscan.small_numbers(text))
    ):
        if jsonscan.depth(text) > max_depth:
            return f"nested deeper than {max_depth} levels"
        return None
    return walked_json_problem(value, max_depth, numbers=numbers)


def walked_json_problem(value: Any, max_depth: int, *, numbers: bool = True) -> str | None:
    """``json_problem`` node by node: the first problem in the order of the walk.
    Iterative, so a hostile nesting cannot exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels"
            if isinstance(node, dict):
                for key, inner in node.items():
                    if (problem := text_problem(str(key))) is not None:
                        return f"a key {problem}"
                    stack.append((inner, depth + 1))
            else:
                stack.extend((inner, depth + 1) for inner in node)
        elif isinstance(node, str):
            if (problem := text_problem(node)) is not None:
                return f"a value {problem}"
        elif not numbers:
            continue
        elif isinstance(node, float) and not math.isfinite(node):
            return "numbers must be finite"
        elif isinstance(node, int) and not -(2**63) <= node < 2**63:
            return "integers must fit in 64 bits"
    return None


def api_name(name: str) -> str:
    """A Python field name as the API spells it (``older_than_seconds`` →
    ``olderThanSeconds``): errors name what the client sent."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def check_json(value: Any, field: str, max_depth: int = 32) -> None:
    """BAD_INPUT naming ``field`` when a JSON value from a client cannot be stored and
    read back (``json_problem``): JSON text in the graph would keep a NaN or an infinity
    that no answer could carry."""
    if (problem := json_problem(value, max_depth)) is not None:
        raise BadInput(f"{field}: {problem}", field=field)


def stored_problem(item: MemoryItem) -> str | None:
    """Why the graph cannot hold a hot item, by the checks every add now passes at the
    edge (one stored before them may fail them), or None."""
    for field, when in (("createdAt", item.created_at), ("lastAccessedAt", item.last_accessed_at)):
        try:
            as_utc(when)
        except ValueError as exc:
            return f"{field}: {exc}"
    numbers = {
        "accessCount": item.access_count,
        "tokenCount": item.token_count,
        "seq": item.seq,
        "relevanceScore": item.relevance_score,
    }
    for field, number in numbers.items():
        if (problem := json_problem(number, 1)) is not None:
            return f"{field}: {problem}"
    if (problem := text_problem(item.content)) is not None:
        return f"content: {problem}"
    # depth is no concern of the graph's (metadata is JSON text there); numbers are
    if (problem := json_problem(item.metadata, 10_000)) is not None:
        return f"metadata: {problem}"
    return None


def bad_input(exc: ValidationError) -> BadInput:
    """The first pydantic error as a BAD_INPUT naming its field (as the API spells it),
    without pydantic's URL."""
    first = exc.errors()[0]
    field = ".".join(api_name(p) if isinstance(p, str) else str(p) for p in first.get("loc", ()))
    message = str(first.get("msg", "invalid input")).removeprefix("Value error, ")
    return BadInput(f"{field}: {message}" if field else message, field=field)


class Inputs:
    """The checks every capability runs on what it is given, under one set of limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def add(self, raw: AddMemory | dict[str, Any]) -> AddMemory:
        try:
            spec = raw if isinstance(raw, AddMemory) else AddMemory.model_validate(raw)
        except ValidationError as exc:
            raise bad_input(exc) from exc
        if not spec.content.strip():
            raise BadInput("content: must not be empty", field="content")
        if (problem := text_problem(spec.content)) is not None:
            raise BadInput(f"content: {problem}", field="content")
        if (problem := json_problem(spec.metadata, self.limits.max_metadata_depth)) is not None:
            raise BadInput(f"metadata: {problem}", field="metadata")
        if len(spec.content) > self.limits.max_content_chars:
            raise BadInput(
                f"content: at most {self.limits.max_content_chars} characters "
                f"(got {len(spec.content)})",
                field="content",
            )
        size = len(json.dumps(spec.metadata, separators=(",", ":"), default=str))
        if size > self.limits.max_metadata_bytes:
            raise BadInput(
                f"metadata: at most {self.limits.max_metadata_bytes} bytes of JSON",
                field="metadata",
            )
        return spec

    def limit(self, limit: int, field: str = "limit") -> int:
        """``field``: the argument's name in the API (``first`` on paged queries)."""
        if not 1 <= limit <= self.limits.max_limit:
            raise BadInput(f"{field}: must be between 1 and {self.limits.max_limit}", field=field)
        return limit

    def query(self, query: str) -> str:
        if not query.strip():
            raise BadInput("query: must not be empty", field="query")
        if (problem := text_problem(query)) is not None:
            raise BadInput(f"query: {problem}", field="query")
        if len(query) > self.limits.max_query_chars:
            raise BadInput(
                f"query: at most {self.limits.max_query_chars} characters", field="query"
            )
        return query

    @staticmethod
    def scope(session_id: str | None, user_id: str | None) -> None:
        try:
            check_id(session_id, "sessionId")
            check_id(user_id, "userId")
        except ValueError as exc:
            raise BadInput(str(exc)) from exc

    @staticmethod
    def id_batch(ids: Sequence[str], field: str, most: int) -> list[str]:
        """``ids`` once each, in order; BAD_INPUT for none or more than ``most``."""
        unique = list(dict.fromkeys(ids))
        if not unique:
            raise BadInput(f"{field}: at least one id is required", field=field)
        if len(unique) > most:
            raise BadInput(f"{field}: at most {most} per call", field=field)
        return unique

    @staticmethod
    def item_id(item_id: str) -> None:
        if not ID_PATTERN.fullmatch(item_id):
            raise BadInput("itemId: not a valid memory id", field="itemId")
