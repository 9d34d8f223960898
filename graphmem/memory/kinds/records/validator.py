"""Checks of records against their schemas (and of schemas against their metaschema) in
bounded work that can be stopped.

jsonschema's work for one record has no bound a tenant cannot lift: definitions that
recurse through two branches of an ``anyOf`` check a value 2^depth times, ``uniqueItems``
compares objects pairwise, and ``pattern`` backtracks in Python's ``re``. A timer around
the check only ends the waiting: the thread runs on, and a handful of such requests held
every worker thread for minutes. Here every keyword application is charged to a
``Budget`` held by the checking thread; past its limit, or once the caller has cancelled
it, the next charge raises and the check unwinds where it stands. Patterns run on RE2
(linear time) and ``uniqueItems`` hashes each item once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import cache, lru_cache
from typing import Any

import re2
from jsonschema import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry
from referencing.jsonschema import DRAFT202012, specification_with

Keyword = Callable[[Validator, Any, Any, Any], Iterator[ValidationError] | None]

#: keywords that check the value once per element of their own value
_PER_ELEMENT = frozenset({"allOf", "anyOf", "oneOf"})
#: no remote retrieval: jsonschema's default registry fetches any http(s) ``$ref`` a
#: schema names, from the API's network
NO_REMOTE: Registry[Any] = Registry()


class Exhausted(Exception):
    """The check ran out of steps, or its caller cancelled it."""


class Budget:
    """Steps one check may take; shared with the thread that runs it."""

    __slots__ = ("cancelled", "limit", "used")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.cancelled = False

    def allow(self, steps: int) -> None:
        """Let the next stage of the check take ``steps`` more."""
        self.limit = self.used + steps

    def charge(self, steps: int) -> None:
        self.used += steps
        if self.cancelled or self.used > self.limit:
            raise Exhausted

    def cancel(self) -> None:
        """Stop the check at its next step (an attribute write: safe across threads)."""
        self.cancelled = True


_budget: ContextVar[Budget] = ContextVar("record_validation_budget")


def _charge(steps: int) -> None:
    _budget.get().charge(steps)


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    return re2.compile(pattern)


def _pattern(validator: Validator, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string"):
        _charge(len(instance) // 1024)
        if not _regex(pattern).search(instance):
            yield ValidationError(f"{instance[:80]!r} does not match {pattern[:80]!r}")


def _pattern_properties(
    validator: Validator, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    _charge(len(patterns) * len(instance) // 16)
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
    _charge(len(patterns) * len(instance) // 16)
    extras = [k for k in instance if k not in named and not any(r.search(k) for r in patterns)]
    if validator.is_type(additional, "object"):
        for key in extras:
            yield from validator.descend(instance[key], additional, path=key)
    elif additional is False and extras:
        yield ValidationError(f"additional properties are not allowed ({', '.join(extras)})")


def _unique_items(validator: Validator, unique_: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if unique_ and validator.is_type(instance, "array"):
        _charge(len(instance))
        if not unique(instance):
            yield ValidationError(f"an array of {len(instance)} items has non-unique elements")


def unique(items: list[Any]) -> bool:
    """Whether no two items are equal as JSON schema compares them: 1 equals 1.0 but
    not true, objects regardless of key order. One hash per item, not a pairwise scan."""
    seen: set[Any] = set()
    for item in items:
        key = _canonical(item)
        if key in seen:
            return False
        seen.add(key)
    return True


def _canonical(value: Any) -> Any:
    """A hashable form equal exactly when two JSON values are. Python already equates
    1 and 1.0 (with equal hashes); the tags keep true apart from 1 and "1" from 1."""
    if isinstance(value, bool):
        return (0, value)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, list):
        return (3, tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return (4, frozenset((k, _canonical(v)) for k, v in value.items()))
    return (5, None)


def _charged(name: str, keyword: Keyword) -> Keyword:
    per_element = name in _PER_ELEMENT

    def apply(validator: Validator, value: Any, instance: Any, schema: Any) -> Any:
        # called, then iterated at once by jsonschema: charging here charges the work.
        # Every keyword of every check passes here, hence Budget.charge inlined.
        budget = _budget.get()
        budget.used += 1
        if isinstance(value, list | dict):
            budget.used += len(value) if per_element else len(value) // 16
        if budget.cancelled or budget.used > budget.limit:
            raise Exhausted
        return keyword(validator, value, instance, schema)

    return apply


@cache
def _budgeted(base: type[Validator]) -> type[Validator]:
    """``base`` with the linear keywords, every keyword charged to the budget."""
    keywords: dict[str, Keyword] = {
        **base.VALIDATORS,
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
        "uniqueItems": _unique_items,
    }
    charged = {name: _charged(name, keyword) for name, keyword in keywords.items()}
    return extend(base, charged)  # type: ignore[no-any-return]


def first_error(schema: dict[str, Any], data: Any, budget: Budget) -> ValidationError | None:
    """The first place ``data`` breaks ``schema``; raises ``Exhausted`` past the budget.
    The schema must have passed ``record_shape`` (a nested ``$schema`` would switch to
    jsonschema's own validator, outside the budget)."""
    return _first(_budgeted(validator_for(schema))(schema, registry=NO_REMOTE), data, budget)


def first_schema_error(schema: dict[str, Any], budget: Budget) -> ValidationError | None:
    """Where ``schema`` breaks its dialect's metaschema (jsonschema's ``check_schema``,
    formats included), within the budget: checking a schema of thousands of subschemas
    against the metaschema takes seconds too."""
    dialect = validator_for(schema)
    meta = validator_for(dialect.META_SCHEMA, default=dialect)
    registry = _metaschemas()
    uri = str(dialect.ID_OF(dialect.META_SCHEMA) or "").rstrip("#")
    root = registry.get(uri) or registry[uri + "#"]
    validator = _budgeted(meta)(
        root.contents,
        _resolver=registry.resolver_with_root(root),
        format_checker=meta.FORMAT_CHECKER,
    )
    return _first(validator, schema, budget)


@cache
def _metaschemas() -> Registry[Any]:
    """jsonschema's metaschemas without their ``$schema``: a subschema that names its
    dialect makes jsonschema switch to that dialect's own class, outside the budget."""
    stripped = []
    for uri in SPECIFICATIONS:
        contents = SPECIFICATIONS[uri].contents
        if isinstance(contents, dict):
            spec = specification_with(str(contents.get("$schema", "")), default=DRAFT202012)
            contents = {k: v for k, v in contents.items() if k != "$schema"}
            stripped.append((uri, spec.create_resource(contents)))
    return Registry().with_resources(stripped).crawl()


def _first(validator: Validator, instance: Any, budget: Budget) -> ValidationError | None:
    token = _budget.set(budget)
    try:
        error: ValidationError | None = next(iter(validator.iter_errors(instance)), None)
        return error
    finally:
        _budget.reset(token)
