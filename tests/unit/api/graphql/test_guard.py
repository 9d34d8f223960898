"""The operation-cost pass: linear in the document, whatever fragments spread."""

from __future__ import annotations

import time

import pytest
from graphql import get_introspection_query, parse

from graphmem.api.graphql.guard import Cost, DocumentTooCostly, Limits, check, operation_costs
from tests.support.documents import fragment_bomb


def test_fragments_are_counted_where_they_are_spread() -> None:
    costs = operation_costs(parse(fragment_bomb(5)), cap=10_000)
    assert costs == {"": Cost(depth=1, aliases=0, fields=32)}


def test_the_expanded_count_saturates_and_the_pass_stays_linear() -> None:
    document = parse(fragment_bomb(200))
    started = time.perf_counter()
    costs = operation_costs(document, cap=501)
    elapsed = time.perf_counter() - started
    assert costs[""].fields == 501
    # 2^200 expanded fields, yet each fragment is visited once
    assert elapsed < 1.0
    with pytest.raises(DocumentTooCostly, match="more than 500 fields"):
        check(document, Limits())


def test_aliases_inside_fragments_count_once_per_spread() -> None:
    document = parse(
        "query Q { ...A ...A ...A } fragment A on Query { a: __typename b: __typename }"
    )
    assert operation_costs(document, cap=100)["Q"].aliases == 6
    with pytest.raises(DocumentTooCostly, match="aliases"):
        check(document, Limits(max_aliases=5))
    check(document, Limits(max_aliases=6))


def test_depth_runs_through_fragments_and_inline_fragments() -> None:
    document = parse(
        "{ __schema { ...T } } fragment T on __Schema { types { ... on __Type { name } } }"
    )
    assert operation_costs(document, cap=100)[""].depth == 3
    with pytest.raises(DocumentTooCostly, match="nested 3 deep"):
        check(document, Limits(max_depth=2))


def test_cycles_and_unknown_fragments_terminate() -> None:
    document = parse(
        "query { ...A ...Missing } fragment A on Query { ...B } fragment B on Query { ...A }"
    )
    assert operation_costs(document, cap=100)[""] == Cost()


def test_every_operation_is_checked() -> None:
    fragments = fragment_bomb(12).removeprefix("query { ...F0 } ")
    document = parse("query Small { __typename } query Big { ...F0 } " + fragments)
    with pytest.raises(DocumentTooCostly, match="'Big'"):
        check(document, Limits())


def test_the_ide_introspection_query_is_allowed() -> None:
    check(parse(get_introspection_query(descriptions=True)), Limits())
