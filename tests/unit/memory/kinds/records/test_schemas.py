"""Record schemas that make validation blow up (a noisy neighbour): refused at
registration when their shape shows it, and stopped by a step budget inside the check
when it does not, with no work left running after the refusal."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest
from jsonschema._utils import equal

from graphmem.errors import BadInput
from graphmem.memory.kinds.records import schemas as record_schemas
from tests.support.records import HOSTILE, chain, nest, threads_validating


def refusal(schema: dict[str, Any]) -> str:
    with pytest.raises(BadInput) as caught:
        record_schemas.check_schema(schema)
    assert caught.value.details == {"field": "schema"}
    return caught.value.message


# --- registration ---------------------------------------------------------------------------
def test_recursion_through_two_branches_of_any_of_is_refused() -> None:
    message = refusal(HOSTILE)
    assert "anyOf" in message and "#/$defs/n" in message, message


@pytest.mark.parametrize(
    ("keyword", "node"),
    [
        ("oneOf", {"oneOf": [{"properties": {"a": {"$ref": "#/$defs/n"}}}, {"$ref": "#/$defs/m"}]}),
        ("allOf", {"allOf": [{"$ref": "#/$defs/m"}, {"$ref": "#/$defs/m"}]}),
        ("then", {"if": {"$ref": "#/$defs/m"}, "then": {"$ref": "#/$defs/m"}}),
        ("patternProperties", {"$ref": "#/$defs/m", "patternProperties": {"^a": {"$ref": "#"}}}),
    ],
)
def test_other_ways_to_check_one_value_twice_per_level_are_refused(
    keyword: str, node: dict[str, Any]
) -> None:
    schema = {
        "$defs": {"n": node, "m": {"properties": {"a": {"$ref": "#/$defs/n"}}}},
        "properties": {"a": {"$ref": "#/$defs/n"}},
    }
    message = refusal(schema)
    assert keyword in message and "#/$defs/n" in message, message


def test_recursive_shapes_that_check_each_value_once_are_accepted() -> None:
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    "meta": {"additionalProperties": {"$ref": "#/$defs/node"}},
                },
            },
            # one branch recurses: each value takes it at most once
            "value": {"anyOf": [{"type": "string"}, {"items": {"$ref": "#/$defs/value"}}]},
        },
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/node"}, "v": {"$ref": "#/$defs/value"}},
    }
    record_schemas.check_schema(tree)


def test_a_ref_that_loops_without_descending_into_the_data_is_refused() -> None:
    message = refusal({"$defs": {"n": {"allOf": [{"$ref": "#/$defs/n"}]}}, "$ref": "#/$defs/n"})
    assert "loop" in message and "#/$defs/n" in message, message


def test_refs_that_fan_out_without_recursion_are_refused() -> None:
    defs: dict[str, Any] = {"d0": {"type": "string"}}
    for i in range(1, 25):
        defs[f"d{i}"] = {"allOf": [{"$ref": f"#/$defs/d{i - 1}"}, {"$ref": f"#/$defs/d{i - 1}"}]}
    message = refusal({"$defs": defs, "properties": {"x": {"$ref": "#/$defs/d24"}}})
    assert "allOf" in message, message


@pytest.mark.parametrize("ref", ["http://127.0.0.1:9/x.json", "#/$defs/missing", "other.json"])
def test_refs_must_resolve_inside_the_schema(ref: str) -> None:
    message = refusal({"properties": {"x": {"$ref": ref}}, "$defs": {}})
    assert "$ref" in message and "#/properties/x" in message, message


def test_a_nested_dialect_is_refused() -> None:
    # a subschema naming another dialect would be checked by jsonschema's own validator,
    # outside the budget and with Python's backtracking regular expressions
    nested = {"$schema": "http://json-schema.org/draft-07/schema#", "pattern": "^(a+)+$"}
    message = refusal({"properties": {"x": nested}})
    assert "$schema" in message and "#/properties/x" in message, message


@pytest.mark.parametrize("bound", [{}, {"maxItems": 1_000_000}])
def test_unique_items_needs_a_max_items_bound(bound: dict[str, Any]) -> None:
    message = refusal({"properties": {"tags": {"type": "array", "uniqueItems": True, **bound}}})
    assert "uniqueItems" in message and "maxItems" in message and "#/properties/tags" in message
    record_schemas.check_schema(
        {"properties": {"tags": {"type": "array", "uniqueItems": True, "maxItems": 5000}}}
    )


async def test_checking_a_schema_against_its_metaschema_is_bounded_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from graphmem.memory.kinds.records.validator import Budget, Exhausted

    # each subschema costs the metaschema check 0.1 to 0.5 ms: jsonschema took 6 s over
    # this one, on the event loop. A fast machine checks it within the 2 s bound (and it
    # is then accepted): the bound is lowered so that the check runs out on any machine.
    monkeypatch.setattr(record_schemas, "REGISTER_SECONDS", 0.2)
    heavy = {"type": "object", "allOf": [True] * 10_000}
    with pytest.raises(BadInput) as caught:
        await record_schemas.check(heavy)
    assert "took too long" in caught.value.message or "steps" in caught.value.message
    assert threads_validating() == []
    with pytest.raises(Exhausted):
        record_schemas.check_schema({"type": "object", "allOf": [True] * 100}, Budget(500))
    await record_schemas.check({"type": "object", "allOf": [True] * 100})


# --- validation ---------------------------------------------------------------------------
async def test_the_budget_stops_the_check_and_nothing_keeps_running() -> None:
    schema = chain(8)
    record_schemas.check_schema(schema)  # the shape check cannot see this one
    with pytest.raises(BadInput) as caught:
        await record_schemas.validate("chain", schema, nest(31))
    assert "steps" in caught.value.message, caught.value.message
    assert threads_validating() == []


async def test_a_timed_out_check_is_stopped_before_the_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(record_schemas, "VALIDATE_SECONDS", 0.2)
    monkeypatch.setattr(record_schemas, "steps_for", lambda data: 10**12)
    with pytest.raises(BadInput) as caught:
        await record_schemas.validate("chain", chain(8), nest(31))
    assert "took too long" in caught.value.message
    assert threads_validating() == []


async def test_a_hostile_schema_stored_before_the_checks_is_refused_when_used() -> None:
    with pytest.raises(BadInput) as caught:
        await record_schemas.validate("old", HOSTILE, nest(31))
    assert "anyOf" in caught.value.message and "register" in caught.value.message
    assert threads_validating() == []


async def test_large_ordinary_records_fit_the_budget() -> None:
    schema = {
        "type": "object",
        "properties": {
            "xs": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 10**6}},
            "rows": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "tag"],
                    "properties": {"id": {"type": "integer"}, "tag": {"enum": ["a", "b"]}},
                    "additionalProperties": False,
                },
            },
        },
    }
    rows = [{"id": i, "tag": "ab"[i % 2]} for i in range(1200)]
    data: dict[str, Any] = {"xs": list(range(5000)), "rows": rows}
    assert len(json.dumps(data)) < 64 * 1024
    await record_schemas.validate("big", schema, data)
    data["rows"][-1]["tag"] = "c"
    with pytest.raises(BadInput, match="rows/1199/tag"):
        await record_schemas.validate("big", schema, data)


async def test_unique_items_over_thousands_of_objects() -> None:
    schema = {"properties": {"xs": {"type": "array", "uniqueItems": True, "maxItems": 5000}}}
    items: list[Any] = [{"k": i} for i in range(4000)]
    await record_schemas.validate("u", schema, {"xs": items})
    with pytest.raises(BadInput, match="non-unique"):
        await record_schemas.validate("u", schema, {"xs": [*items, {"k": 17.0}]})


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([1, 1.0], False),
        ([1, True], True),
        ([0, False], True),
        ([None, False, 0, "", [], {}], True),
        ([{"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]}], False),
        ([{"a": True}, {"a": 1}], True),
        ([[1, 2], [2, 1]], True),
        ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
        (["1", 1], True),
    ],
)
async def test_unique_items_follows_json_schema_equality(items: list[Any], unique: bool) -> None:
    schema = {"properties": {"xs": {"uniqueItems": True, "maxItems": 10}}}
    if unique:
        await record_schemas.validate("u", schema, {"xs": items})
    else:
        with pytest.raises(BadInput, match="non-unique"):
            await record_schemas.validate("u", schema, {"xs": items})


def test_unique_items_agrees_with_pairwise_equality() -> None:
    from graphmem.memory.kinds.records.validator import unique

    rng = random.Random(29)
    scalars: list[list[Any]] = [[None], [True, False], [0, 1, 2], [0.0, 1.0, 2.5], ["", "a", "1"]]

    def value(depth: int) -> Any:
        kind = rng.randrange(7 if depth < 3 else 5)
        if kind == 5:
            return [value(depth + 1) for _ in range(rng.randrange(3))]
        if kind == 6:
            return {k: value(depth + 1) for k in rng.sample("ab", rng.randrange(3))}
        return rng.choice(scalars[kind])

    for _ in range(2000):
        items = [value(0) for _ in range(rng.randrange(1, 5))]
        expected = not any(equal(x, y) for x, y in itertools.combinations(items, 2))
        assert unique(items) is expected, items
