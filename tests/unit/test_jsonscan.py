"""The request checks read from a value's JSON text give the answers the node-by-node
walk gives, on hostile values too (their cost: bench/neighbours.py, BENCHMARKS.md)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from graphmem import jsonscan
from graphmem.api.graphql.lengths import _json_too_long
from graphmem.api.http.bodies import MAX_JSON_DEPTH, BadBody, decode
from graphmem.memory.inputs import json_problem, walked_json_problem


def nested(levels: int, leaf: Any = 1) -> Any:
    value = leaf
    for n in range(levels):
        value = [value] if n % 2 else {"k": value}
    return value


HOSTILE: list[Any] = [
    1,
    "plain",
    {},
    [],
    nested(3),
    nested(10),
    nested(11),
    nested(40),
    {"a": "x\x00y"},
    {"x\x00": 1},
    {"a": "\ud800"},
    {"\udfff": 1},
    [float("nan")],
    {"a": float("inf")},
    {"a": 2**63},
    {"a": -(2**63)},
    {"a": -(2**63) - 1},
    {"a": 2**63 - 1},
    {"a": "1234567890123456789012"},  # digits inside a string: not a number
    {"a": "[[[[[[[[[[[[[[[[[[[["},  # brackets inside a string: not nesting
    {'a"]]': '\\"[[{{'},
    {"a": "\\u0000"},  # the six characters, not a NUL
    {"a": 1.5e300, "b": -0.0, "c": True, "d": None},
    {"é": "ünïcødé 😀", "list": ["\u2028", "\x1f"]},
    nested(9, "x\x00"),
    nested(12, "\ud800"),
    {"deep": nested(15), "bad": "\x00"},
]


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("numbers", [True, False])
def test_the_text_answers_as_the_walk_does(value: Any, numbers: bool) -> None:
    assert json_problem(value, 10, numbers=numbers) == walked_json_problem(
        value, 10, numbers=numbers
    )


def random_json(rng: random.Random, budget: int) -> Any:
    pick = rng.random()
    if budget <= 0 or pick < 0.3:
        return rng.choice(
            [
                rng.randint(-(2**64), 2**64),
                rng.randint(-100, 100),
                rng.random() * 10 ** rng.randint(-5, 300),
                "".join(rng.choice('ab"\\[]{}\x00\ud800é 0123456789') for _ in range(5)),
                True,
                None,
            ]
        )
    if pick < 0.65:
        return [random_json(rng, budget - 1) for _ in range(rng.randint(0, 3))]
    return {
        "".join(rng.choice('k"\\[\x00') for _ in range(2)): random_json(rng, budget - 1)
        for _ in range(rng.randint(0, 3))
    }


def test_random_values_get_the_walks_answer() -> None:
    rng = random.Random(29)
    for _ in range(3000):
        value = random_json(rng, rng.randint(0, 14))
        for numbers in (True, False):
            assert json_problem(value, 8, numbers=numbers) == walked_json_problem(
                value, 8, numbers=numbers
            ), value


def test_depth_and_longest_string_read_from_the_text() -> None:
    assert jsonscan.depth(json.dumps(nested(7))) == 7
    assert jsonscan.depth(json.dumps({"a": "[[[[", "b": [[]]})) == 3
    assert jsonscan.depth("3") == 0
    text = json.dumps({"k" * 30: ["x" * 50, 'q"' * 10]})
    assert jsonscan.longest_string(text) >= 50


@pytest.mark.parametrize("length", [99, 100, 101])
@pytest.mark.parametrize("where", ["value", "key", "deep"])
def test_a_json_scalars_long_string_is_found_at_its_limit(length: int, where: str) -> None:
    text = "é" * (length - 1) + '"'  # non-ASCII and an escaped quote: counted as in the value
    value: Any = {
        "value": {"a": text},
        "key": {text: 1},
        "deep": {"a": [{"b": nested(5, text)}] * 50},
    }[where]
    found = _json_too_long(value, "data", 100)
    assert found == (None if length <= 100 else ("data", 100))


@pytest.mark.parametrize(
    "source",
    [
        '{"a": "x\\u0000y"}',
        '{"a": "\\ud800"}',
        '{"a": "\\uD83D\\uDE00"}',  # a pair: fine, but only the walk can tell
        '{"a": "\\\\u0000"}',  # the six characters
        '{"a": "[[[[[[[[[[[[[[[["}',
        json.dumps(nested(MAX_JSON_DEPTH)),
        json.dumps(nested(MAX_JSON_DEPTH + 1)),
        '{"a": [1, 2, {"b": "\\"]]]"}]}',
        " [ [ ] , { } ] ",
    ],
)
def test_a_body_is_judged_as_its_decoded_value_is(source: str) -> None:
    value = json.loads(source)
    expected = walked_json_problem(value, MAX_JSON_DEPTH, numbers=False)
    if expected is None:
        assert decode(source) == value
        assert decode(source.encode()) == value
    else:
        with pytest.raises(BadBody, match="JSON"):
            decode(source)
