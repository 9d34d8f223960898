"""The other memory types and the MemoryManager router, through the API
(docs/concepts.md#memory-types)."""

from __future__ import annotations

from tests.conftest import Api, Stack, run_cypher

REMEMBER = """mutation($i: RememberInput!) { remember(input: $i) {
  kind memoryId episodeId recordId working message { role content } } }"""
RETRIEVE = """query($q: String!, $k: [MemoryKind!], $s: ID, $u: ID, $t: ID, $a: ID, $sc: String,
  $w: JSON) { retrieve(query: $q, kinds: $k, sessionId: $s, userId: $u, taskId: $t,
  agentId: $a, schema: $sc, where: $w) {
  working shortTerm { role content } longTerm { score item { content } }
  persona { role learnedTraits { item { content } } prompt }
  episodic { episode { outcome } } entities { entity { name } }
  structured { data } } }"""


async def test_working_memory_is_per_task_and_cleared_on_completion(api: Api) -> None:
    task = (await api.data('mutation { createTask(description: "book a trip") { id } }'))[
        "createTask"
    ]["id"]
    set_ = "mutation($t: ID!, $k: String!, $v: JSON) { setWorkingMemory(taskId: $t, key: $k, value: $v) }"  # noqa: E501
    await api.data(set_, {"t": task, "k": "destination", "v": "Paris"})
    data = await api.data(set_, {"t": task, "k": "request", "v": {"kind": "book trip"}})
    assert data["setWorkingMemory"] == {"destination": "Paris", "request": {"kind": "book trip"}}
    other = await api.data("query($t: ID!) { workingMemory(taskId: $t) }", {"t": "other"})
    assert other["workingMemory"] == {}
    await api.data("mutation($t: ID!) { completeTask(taskId: $t) { status } }", {"t": task})
    after = await api.data("query($t: ID!) { workingMemory(taskId: $t) }", {"t": task})
    assert after["workingMemory"] == {}


async def test_short_term_history_keeps_the_last_messages(api: Api) -> None:
    add = 'mutation($c: String!, $r: String!) { addMessage(sessionId: "s", content: $c, role: $r) { role } }'  # noqa: E501
    await api.data(add, {"c": "How much would a flight to Paris cost?", "r": "user"})
    await api.data(add, {"c": "About 300 EUR.", "r": "assistant"})
    await api.data(add, {"c": "What about accommodation there?", "r": "user"})
    last = await api.data('{ conversation(sessionId: "s", last: 2) { role content } }')
    assert last["conversation"] == [
        {"role": "assistant", "content": "About 300 EUR."},
        {"role": "user", "content": "What about accommodation there?"},
    ]
    body = await api.gql(add, {"c": "hi", "r": "narrator"})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    other = next(k for k in list(api.keys)[1:])
    assert (await api.data('{ conversation(sessionId: "s") { role } }', tenant=other))[
        "conversation"
    ] == []


async def test_persona_merges_configured_role_with_learned_traits(api: Api) -> None:
    set_ = """mutation { setPersona(agentId: "planner", input: {role: "Expert ski trip planner",
      tone: "friendly, knowledgeable", expertise: ["skiing", "mountain resorts"],
      constraints: ["safety-first", "budget-conscious"]}) { role source } }"""
    assert (await api.data(set_))["setPersona"] == {
        "role": "Expert ski trip planner",
        "source": "stored",
    }
    learn = 'mutation($t: String!) { learnPersonaTrait(agentId: "planner", trait: $t) }'
    await api.data(learn, {"t": "Suggests beginner slopes to guests with past injuries"})
    await api.data(learn, {"t": "Always mentions coffee places with a mountain view"})
    persona = (
        await api.data(
            '{ persona(agentId: "planner", query: "injury") { role expertise '
            "learnedTraits { item { content } } prompt } }"
        )
    )["persona"]
    assert persona["expertise"] == ["skiing", "mountain resorts"]
    assert persona["learnedTraits"][0]["item"]["content"].startswith("Suggests beginner")
    assert "You are Expert ski trip planner." in persona["prompt"]
    assert "Learned behaviors:" in persona["prompt"] and "coffee" in persona["prompt"]
    missing = await api.gql('{ persona(agentId: "nobody") { role } }')
    assert missing["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_structured_records_are_validated_and_queried_by_field(api: Api) -> None:
    schema = {
        "type": "object",
        "required": ["flight_number", "destination"],
        "properties": {
            "flight_number": {"type": "string"},
            "destination": {"type": "string"},
            "terminal": {"type": "string"},
            "seats": {"type": "integer"},
        },
    }
    reg = 'mutation($s: JSON!) { registerRecordSchema(name: "flight", schema: $s) }'
    assert (await api.data(reg, {"s": schema}))["registerRecordSchema"] is True
    add = 'mutation($d: JSON!) { addRecord(schema: "flight", data: $d) { id data } }'
    await api.data(
        add, {"d": {"flight_number": "UA1234", "destination": "Paris", "terminal": "3", "seats": 2}}
    )
    await api.data(add, {"d": {"flight_number": "AF5678", "destination": "Paris"}})
    await api.data(add, {"d": {"flight_number": "LH42", "destination": "Berlin"}})
    bad = await api.gql(add, {"d": {"flight_number": 7, "destination": "Rome"}})
    assert bad["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    assert "flight_number" in bad["errors"][0]["message"]
    query = 'query($w: JSON) { records(schema: "flight", where: $w) { data } }'
    paris = (await api.data(query, {"w": {"destination": "Paris"}}))["records"]
    assert sorted(r["data"]["flight_number"] for r in paris) == ["AF5678", "UA1234"]
    one = (await api.data(query, {"w": {"destination": "Paris", "seats": 2}}))["records"]
    assert [r["data"]["flight_number"] for r in one] == ["UA1234"]
    bad_schema = await api.gql(reg, {"s": {"type": "object", "properties": {"x": {"type": 5}}}})
    assert bad_schema["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_manager_routes_add_and_retrieve_across_types(api: Api) -> None:
    await api.data(
        REMEMBER,
        {
            "i": {
                "kind": "LONG_TERM",
                "content": "Ben enjoys skiing and outdoor activities",
                "sessionId": "s1",
                "userId": "ben",
            }
        },
    )
    await api.data(
        REMEMBER,
        {
            "i": {
                "kind": "ENTITY",
                "content": "Ben stayed in Chamonix.",
                "sessionId": "s1",
                "userId": "ben",
            }
        },
    )
    await api.data(
        REMEMBER, {"i": {"kind": "SHORT_TERM", "content": "Find me a chalet", "sessionId": "s1"}}
    )
    task = (await api.data('mutation { createTask(description: "find a chalet") { id } }'))[
        "createTask"
    ]["id"]
    await api.data(
        REMEMBER, {"i": {"kind": "WORKING", "taskId": task, "key": "budget", "value": 2000}}
    )
    await api.data(
        REMEMBER, {"i": {"kind": "EPISODIC", "content": "chalet booked", "taskId": task}}
    )
    missing = await api.gql(REMEMBER, {"i": {"kind": "WORKING", "key": "k"}})
    assert missing["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    # the long-term memory is in the hot tier until it spills; spill the session
    await api.data('mutation { spill(sessionId: "s1", count: 10) { spilledCount } }')
    got = (await api.data(RETRIEVE, {"q": "skiing holidays", "u": "ben", "s": "s1", "t": task}))[
        "retrieve"
    ]
    assert got["working"] == {"budget": 2000}
    assert got["shortTerm"] == [{"role": "user", "content": "Find me a chalet"}]
    assert got["longTerm"][0]["item"]["content"].startswith("Ben enjoys skiing")
    assert any(e["entity"]["name"] == "Chamonix" for e in got["entities"])
    assert got["episodic"][0]["episode"]["outcome"] == "chalet booked"
    only = (await api.data(RETRIEVE, {"q": "x", "k": ["WORKING"], "t": task}))["retrieve"]
    assert only["working"] == {"budget": 2000} and only["longTerm"] is None


async def test_forget_user_removes_everything_they_own_and_nothing_else(
    api: Api, stack: Stack
) -> None:
    tenant = next(iter(api.keys))
    add = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
    for text, user, session in [
        ("Zoe visited Kyoto near Mount Inari.", "zoe", "z1"),
        ("Zoe loves Osaka.", "zoe", "z2"),
        ("Yuki also visited Kyoto.", "yuki", "y1"),
    ]:
        await api.data(add, {"i": {"sessionId": session, "userId": user, "content": text}})
    await api.data('mutation { spill(sessionId: "z1", count: 5) { spilledCount } }')
    await api.data('mutation { spill(sessionId: "y1", count: 5) { spilledCount } }')
    # z2 stays in the hot tier
    done = (
        await api.data(
            'mutation { forgetUser(userId: "zoe") { hotMemories graphMemories sessions entities } }'
        )
    )["forgetUser"]
    assert done["hotMemories"] == 1 and done["graphMemories"] == 1
    assert done["sessions"] == 1 and done["entities"] >= 2  # Zoe, Mount Inari ...
    (row,) = await run_cypher(
        stack,
        """
          RETURN count { MATCH (m:Memory {tenant: $t, userId: 'zoe'}) } AS memories,
                 count { MATCH (u:User {tenant: $t, id: 'zoe'}) } AS users,
                 count { MATCH (e:Entity {tenant: $t}) WHERE NOT (:Memory)-[:MENTIONS]->(e) }
                   AS orphans,
                 COLLECT { MATCH (e:Entity {tenant: $t}) RETURN e.name } AS names,
                 count { MATCH (:Session {tenant: $t, id: 'z1'}) } AS sessions""",
        t=tenant,
    )
    assert (row["memories"], row["users"], row["orphans"], row["sessions"]) == (0, 0, 0, 0)
    assert "Kyoto" in row["names"] and "Yuki" in row["names"] and "Zoe" not in row["names"]
    assert (await api.data('{ hot(sessionId: "z2") { id } }'))["hot"] == []
