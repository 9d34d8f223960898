"""JSON schemas of structured records, checked and applied with a linear-time regex engine.

jsonschema evaluates ``pattern`` and ``patternProperties`` with Python's backtracking
``re``: a pattern such as ``^(a+)+$`` against a few dozen characters takes seconds, and a
tenant chooses both the pattern and the text. Here every pattern must compile in RE2
(no backreferences or lookaround; linear time in the input), the three keywords that
match patterns run on RE2, and validation runs in a worker thread under a time cap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import re2
from jsonschema import SchemaError, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for

from .errors import BadInput

#: a record is a small object; validation past this is a hostile schema, not a slow one
VALIDATE_SECONDS = 1.0
MAX_SCHEMA_DEPTH = 32


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    return re2.compile(pattern)


def _pattern(validator: Validator, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Validator, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        regex = _regex(pattern)
        for key, value in instance.items():
            if regex.search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Validator, additional: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    named = schema.get("properties", {})
    patterns = [_regex(p) for p in schema.get("patternProperties", {})]
    extras = [k for k in instance if k not in named and not any(r.search(k) for r in patterns)]
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        yield ValidationError(f"additional properties are not allowed ({', '.join(extras)})")


def _linear(schema: dict[str, Any]) -> type[Validator]:
    base = validator_for(schema)
    return extend(  # type: ignore[no-any-return]
        base,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        },
    )


def _patterns(schema: Any) -> Iterator[str]:
    """Every regular expression a schema holds, wherever it is nested."""
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            raise BadInput(f"schema: nested deeper than {MAX_SCHEMA_DEPTH} levels", field="schema")
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                yield node["pattern"]
            if isinstance(node.get("patternProperties"), dict):
                yield from node["patternProperties"]
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def check_schema(schema: dict[str, Any]) -> None:
    """BAD_INPUT unless ``schema`` is a valid JSON schema whose patterns RE2 accepts."""
    for pattern in _patterns(schema):
        try:
            _regex(pattern)
        except re2.error as exc:
            raise BadInput(
                f"schema: pattern {pattern[:80]!r} is not supported (patterns run on RE2: "
                f"no backreferences or lookaround): {exc}",
                field="schema",
            ) from exc
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        raise BadInput(f"schema: not a valid JSON schema: {exc.message}", field="schema") from exc


def _first_error(schema: dict[str, Any], data: dict[str, Any]) -> ValidationError | None:
    error: ValidationError | None = next(iter(_linear(schema)(schema).iter_errors(data)), None)
    return error


async def validate(schema_name: str, schema: dict[str, Any], data: dict[str, Any]) -> None:
    """BAD_INPUT naming where ``data`` breaks ``schema``; off the event loop, time-capped."""
    try:
        error = await asyncio.wait_for(
            asyncio.to_thread(_first_error, schema, data), VALIDATE_SECONDS
        )
    except TimeoutError as exc:
        raise BadInput(f"validation against schema {schema_name} took too long") from exc
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(record)"
        raise BadInput(
            f"data does not match schema {schema_name} at {where}: {error.message}", field="data"
        )
