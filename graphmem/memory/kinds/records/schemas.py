"""JSON schemas of structured records: refused at registration when checking records
against them could take unbounded work, and applied in bounded work that stops.

Registration refuses what the schema's shape shows (``record_shape``: patterns RE2
cannot run, recursion that reaches a value by two routes, ``$ref`` loops and fan-out,
references outside the schema, ``uniqueItems`` without ``maxItems``). Every check (a
schema against its metaschema, a record against its schema) runs in a worker thread
under a step budget in proportion to what it checks (``record_validator``) and a time
cap: past either, the check itself stops before the refusal is answered, so no
tenant's request leaves work running behind it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import re2
from jsonschema import ValidationError
from referencing.exceptions import Unresolvable

from graphmem.cputime import in_thread
from graphmem.errors import BadInput
from graphmem.memory.kinds.records import shape as record_shape
from graphmem.memory.kinds.records.validator import (
    Budget,
    Exhausted,
    first_error,
    first_schema_error,
)

#: a record is a small object; validation past this is a hostile schema, not a slow one
VALIDATE_SECONDS = 1.0
#: a schema of a thousand subschemas takes half a second against its metaschema
REGISTER_SECONDS = 2.0
MAX_SCHEMA_DEPTH = 32
#: steps a check may take: a base, and so many per JSON value checked (an ordinary
#: schema takes a few keywords per value of a record, one that checks values over and
#: over takes many; the metaschema takes some forty per subschema)
BASE_STEPS = 10_000
STEPS_PER_VALUE = 20
SCHEMA_STEPS_PER_VALUE = 80

T = TypeVar("T")

#: schemas stored before today's checks are analysed once: digest → problem or None
_shapes: OrderedDict[bytes, str | None] = OrderedDict()
_shapes_lock = threading.Lock()
_SHAPES_HELD = 1024


def _patterns(schema: Any) -> list[str]:
    """Every regular expression a schema holds, wherever it is nested."""
    found: list[str] = []
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            raise BadInput(f"schema: nested deeper than {MAX_SCHEMA_DEPTH} levels", field="schema")
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.append(node["pattern"])
            if isinstance(node.get("patternProperties"), dict):
                found.extend(node["patternProperties"])
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return found


def steps_for(value: Any, per_value: int = STEPS_PER_VALUE) -> int:
    """The step budget for checking ``value``: in proportion to its JSON values."""
    values, stack = 0, [value]
    while stack:
        item = stack.pop()
        values += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return BASE_STEPS + per_value * values


def check_schema(schema: dict[str, Any], budget: Budget | None = None) -> None:
    """BAD_INPUT unless ``schema`` is a valid JSON schema whose patterns RE2 accepts and
    whose shape bounds the work of checking a record (``record_shape``). Raises
    ``Exhausted`` when ``budget`` runs out: call ``check`` from the event loop."""
    for pattern in _patterns(schema):
        try:
            re2.compile(pattern)
        except re2.error as exc:
            raise BadInput(
                f"schema: pattern {pattern[:80]!r} is not supported (patterns run on RE2: "
                f"no backreferences or lookaround): {exc}",
                field="schema",
            ) from exc
    if (problem := record_shape.problem(schema)) is not None:
        raise BadInput(f"schema: {problem}", field="schema")
    budget = budget or Budget(steps_for(schema, SCHEMA_STEPS_PER_VALUE))
    if (error := first_schema_error(schema, budget)) is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise BadInput(
            f"schema: not a valid JSON schema at {where}: {error.message}", field="schema"
        )


async def check(schema: dict[str, Any]) -> None:
    """``check_schema`` off the event loop, within its budget and ``REGISTER_SECONDS``."""

    def work(budget: Budget) -> None:
        budget.allow(steps_for(schema, SCHEMA_STEPS_PER_VALUE))
        try:
            check_schema(schema, budget)
        except Exhausted:
            raise _stopped(budget, "checking the schema", field="schema") from None

    await _bounded(work, REGISTER_SECONDS)


async def validate(schema_name: str, schema: dict[str, Any], data: dict[str, Any]) -> None:
    """BAD_INPUT naming where ``data`` breaks ``schema``. Off the event loop, within a
    step budget and ``VALIDATE_SECONDS``; a check that runs out of either has stopped
    by the time this answers."""

    def work(budget: Budget) -> ValidationError | None:
        _refuse_stored(schema_name, schema, budget)
        budget.allow(steps_for(data))
        try:
            return first_error(schema, data, budget)
        except Exhausted:
            raise _stopped(budget, f"validation against schema {schema_name}") from None
        except (RecursionError, Unresolvable):
            raise BadInput(f"schema {schema_name} cannot be applied; register it again") from None

    error = await _bounded(work, VALIDATE_SECONDS)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(record)"
        raise BadInput(
            f"data does not match schema {schema_name} at {where}: {error.message}", field="data"
        )


def _stopped(budget: Budget, what: str, **details: str) -> BadInput:
    if budget.cancelled:
        return BadInput(f"{what} took too long")
    return BadInput(
        f"{what} stopped after {budget.limit:,} steps: the schema checks the values too "
        "many times over",
        **details,
    )


def _refuse_stored(schema_name: str, schema: dict[str, Any], budget: Budget) -> None:
    """BAD_INPUT when a schema registered before today's checks fails them. Each stored
    schema is analysed once per process (held by digest)."""
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).digest()
    with _shapes_lock:
        known = digest in _shapes
        if known:
            _shapes.move_to_end(digest)
            problem = _shapes[digest]
    if not known:
        budget.allow(steps_for(schema, SCHEMA_STEPS_PER_VALUE))
        try:
            check_schema(schema, budget)
            problem = None
        except BadInput as exc:
            problem = exc.message.removeprefix("schema: ")
        except Exhausted:
            if budget.cancelled:  # not the schema's doing: ask again next time
                raise _stopped(budget, f"validation against schema {schema_name}") from None
            problem = "checking it against its metaschema takes too many steps"
        with _shapes_lock:
            _shapes[digest] = problem
            if len(_shapes) > _SHAPES_HELD:
                _shapes.popitem(last=False)
    if problem is not None:
        raise BadInput(
            f"schema {schema_name} was registered before today's checks and is refused "
            f"by them; register it again: {problem}",
            schema=schema_name,
        )


async def _bounded(work: Callable[[Budget], T], seconds: float) -> T:
    """``work`` in a worker thread, stopped through its budget once ``seconds`` pass or
    this call is cancelled; returns (or raises) only once the thread has let go."""
    budget = Budget(0)
    running = asyncio.ensure_future(in_thread(work, budget))
    # a caller that went away never reads the outcome: read it, so nothing is logged
    running.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        return await asyncio.wait_for(asyncio.shield(running), seconds)
    except TimeoutError:
        budget.cancel()
        return await running  # stops at its next step
    finally:
        budget.cancel()
