"""Bad input gets a typed error (never a 500 or a stack trace)."""

from __future__ import annotations

import pytest

from tests.conftest import Api
from tests.support.documents import ADD, RECALL, SEARCH, SPILL


def code_of(body: dict) -> str:
    assert body.get("errors"), body
    return body["errors"][0]["extensions"]["code"]


def assert_no_internals(body: dict) -> None:
    text = str(body)
    for leak in ("Traceback", 'File "', "neo4j.", "redis.", ".py"):
        assert leak not in text, text


@pytest.mark.parametrize(
    "content", ["", "   \n\t", "x" * 20_001], ids=["empty", "blank", "oversized"]
)
async def test_bad_content(api: Api, content: str) -> None:
    body = await api.gql(ADD, {"input": {"sessionId": "s", "content": content}})
    assert code_of(body) == "BAD_INPUT"
    assert body["errors"][0]["extensions"]["field"] == "content"
    assert body["data"] is None
    assert_no_internals(body)


async def test_unknown_memory_type(api: Api) -> None:
    body = await api.gql(ADD, {"input": {"sessionId": "s", "content": "x", "type": "GOSSIP"}})
    assert code_of(body) == "BAD_INPUT"
    assert "GOSSIP" in body["errors"][0]["message"]
    inline = await api.gql(
        'mutation { addMemory(input: {sessionId: "s", content: "x", type: GOSSIP}) { id } }'
    )
    assert code_of(inline) == "BAD_INPUT"


@pytest.mark.parametrize("bad", ["has space", "a:b", "{tag}", "x" * 129, ""])
async def test_bad_session_ids(api: Api, bad: str) -> None:
    body = await api.gql(ADD, {"input": {"sessionId": bad, "content": "x"}})
    assert code_of(body) == "BAD_INPUT"


async def test_metadata_must_be_an_object(api: Api) -> None:
    body = await api.gql(ADD, {"input": {"sessionId": "s", "content": "x", "metadata": [1, 2]}})
    assert code_of(body) == "BAD_INPUT"
    big = {"blob": "y" * 20_000}
    body = await api.gql(ADD, {"input": {"sessionId": "s", "content": "x", "metadata": big}})
    assert code_of(body) == "BAD_INPUT"


@pytest.mark.parametrize("limit", [0, -1, 101, 10_000])
async def test_limits_out_of_range(api: Api, limit: int) -> None:
    recall = await api.gql(RECALL, {"input": {"sessionId": "s", "query": "q", "limit": limit}})
    assert code_of(recall) == "BAD_INPUT"
    search = await api.gql(SEARCH, {"q": "q", "limit": limit})
    assert code_of(search) == "BAD_INPUT"


async def test_spill_count_and_ids_validated(api: Api) -> None:
    assert code_of(await api.gql(SPILL, {"s": "s", "count": 0})) == "BAD_INPUT"
    assert code_of(await api.gql(SPILL, {"s": "s", "count": -3})) == "BAD_INPUT"
    assert code_of(await api.gql(SPILL, {"s": "s", "count": 100_001})) == "BAD_INPUT"
    both = await api.gql(SPILL, {"s": "s", "count": 1, "ids": ["mem_x"]})
    assert code_of(both) == "BAD_INPUT"


async def test_empty_query_and_empty_batch(api: Api) -> None:
    assert (
        code_of(await api.gql(RECALL, {"input": {"sessionId": "s", "query": "  "}})) == "BAD_INPUT"
    )
    many = "mutation M($i: [AddMemoryInput!]!) { addMemories(inputs: $i) { id } }"
    assert code_of(await api.gql(many, {"i": []})) == "BAD_INPUT"


async def test_malformed_json_gets_400_with_graphql_body(api: Api) -> None:
    key = next(iter(api.keys.values()))
    response = await api.client.post(
        "/graphql",
        content=b'{"query": "{ hot(sessionId: \\"s\\") { id } ',
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_query_syntax_error(api: Api) -> None:
    assert code_of(await api.gql("{ hot(sessionId: ")) == "BAD_INPUT"


async def test_query_over_the_depth_limit(api: Api) -> None:
    nested = (
        "{ __schema { types { fields { type "
        + "{ ofType " * 12
        + "{ name }"
        + " }" * 12
        + " } } } }"
    )
    body = await api.gql(nested)
    assert code_of(body) == "BAD_INPUT"
    assert "depth" in body["errors"][0]["message"]
    # the standard IDE introspection query (depth 13) stays allowed
    from graphql import get_introspection_query

    assert "errors" not in await api.gql(get_introspection_query())


async def test_too_many_aliases(api: Api) -> None:
    aliases = " ".join(f'a{i}: hot(sessionId: "s") {{ id }}' for i in range(20))
    body = await api.gql("{ " + aliases + " }")
    assert code_of(body) == "BAD_INPUT"


async def test_too_many_tokens(api: Api) -> None:
    fields = " ".join(["id"] * 3000)
    body = await api.gql('{ hot(sessionId: "s") { ' + fields + " } }")
    assert code_of(body) == "BAD_INPUT"


async def test_request_body_over_the_size_limit(api: Api) -> None:
    key = next(iter(api.keys.values()))
    response = await api.client.post(
        "/graphql",
        content=b'{"query": "' + b"x" * 1_100_000 + b'"}',
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_unknown_memory_id_is_not_found(api: Api) -> None:
    body = await api.gql('mutation { promote(itemId: "mem_missing") { id } }')
    assert code_of(body) == "NOT_FOUND"
    assert_no_internals(body)


def without_python_internals(body: dict) -> None:
    text = str(body)
    for leak in ("_seconds", "sys.", "set_int_max_str_digits", "Internal error"):
        assert leak not in text, text


async def test_errors_name_the_api_arguments_not_python_ones(api: Api) -> None:
    """Messages name the API's fields and arguments, never Python's (older_than_seconds,
    limit for the argument first) nor Python's sys.set_int_max_str_digits()."""
    cases = [
        (
            "mutation { prune(policy: {olderThanSeconds: -1}, dryRun: true) { count } }",
            "olderThanSeconds",
        ),
        (
            "mutation { prune(policy: {olderThanSeconds: 1e400}, dryRun: true) { count } }",
            "olderThanSeconds",
        ),
        (
            'mutation { configureSession(sessionId: "s", config: {hotTokenLimit: 1})'
            " { hotTokenLimit } }",
            "hotTokenLimit",
        ),
        ("query { memories(first: 1000) { next } }", "first"),
        ("query { sessions(first: 0) }", "first"),
        ('query { memories(sessionId: "s", after: "\u00b2:mem_x") { next } }', "after"),
        ('query { conversation(sessionId: "s", last: ' + "9" * 5000 + ") { role } }", "last"),
        (
            'mutation { addMemory(input: {sessionId: "s", content: "x", metadata: {n: '
            + "9" * 5000
            + "}}) { id } }",
            "n",
        ),
    ]
    for query, field in cases:
        body = await api.gql(query)
        assert code_of(body) == "BAD_INPUT", (query[:80], body)
        assert body["errors"][0]["extensions"].get("field") == field, (query[:80], body)
        assert body["errors"][0]["message"].startswith(f"{field}: "), body
        without_python_internals(body)
    key = next(iter(api.keys.values()))
    huge = b'{"query": "query($n: Int!) { conversation(sessionId: \\"s\\", last: $n) { role } }",'
    huge += b' "variables": {"n": ' + b"9" * 5000 + b"}}"
    response = await api.client.post(
        "/graphql",
        content=huge,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400 and code_of(response.json()) == "BAD_INPUT"
    without_python_internals(response.json())


@pytest.mark.parametrize("bad", ["abc\n", "abc\r\n"])
async def test_ids_ending_in_a_newline_are_refused(api: Api, bad: str) -> None:
    """An id pattern ending in '$' would match before a trailing newline."""
    assert code_of(await api.gql(ADD, {"input": {"sessionId": bad, "content": "x"}})) == "BAD_INPUT"
    body = await api.gql(ADD, {"input": {"sessionId": "s", "userId": bad, "content": "x"}})
    assert code_of(body) == "BAD_INPUT"
    for query in (
        "query($s: ID) { memories(sessionId: $s) { next } }",
        "query($s: ID!) { hot(sessionId: $s) { id } }",
        "mutation($s: ID!) { forget(itemId: $s) }",
        "query($s: ID!) { memory(itemId: $s) { id } }",
    ):
        assert code_of(await api.gql(query, {"s": bad})) == "BAD_INPUT", query
