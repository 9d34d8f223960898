"""A tenant's quota covers every kind it can store, not memories alone: records, record
schemas, personas, short-term messages, working memory, tasks, steps, hand-overs,
episodes, imported tasks and the knowledge graph's entities and relations (the MCP
memory-server tools) are items of the same budget (``graphmem/memory/tiers/quota.py``). A
write past it is QUOTA_EXCEEDED and stores nothing; what is deleted or expires is given
back at the exact count."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from graphmem.api.mcp import call
from graphmem.errors import QuotaExceeded
from graphmem.settings import MemoryConfig
from tests.conftest import Api, Stack, run_cypher
from tests.support.apis import codes, limited_api
from tests.support.documents import ADD

SCHEMA = 'mutation($s: JSON!) { registerRecordSchema(name: "note", schema: $s) }'
RECORD = 'mutation($d: JSON!) { addRecord(schema: "note", data: $d) { id } }'
RECORDS = '{ records(schema: "note", limit: 100) { id } }'
MESSAGE = 'mutation($c: String!) { addMessage(sessionId: "chat", content: $c) { content } }'
HISTORY = '{ conversation(sessionId: "chat", last: 100) { content } }'
WORKING = 'mutation($k: String!) { setWorkingMemory(taskId: "job", key: $k, value: 1) }'
PAD = '{ workingMemory(taskId: "job") }'
TASK = 'mutation($d: String!) { createTask(description: $d, owner: "ada") { id } }'
TASKS = '{ tasks(owner: "ada") { items { task { id } } } }'
STEP = "mutation($t: ID!, $a: String!) { addStep(taskId: $t, input: {action: $a}) { id } }"
STEPS = "query($t: ID!) { task(id: $t) { steps { action } } }"
TRANSFER = """mutation($t: ID!, $f: String, $to: String!, $g: Int!) {
  transferTask(taskId: $t, fromOwner: $f, toOwner: $to, generation: $g) { generation } }"""
EPISODE = "mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id } }"
IMPORT = "mutation($i: TaskImportInput!) { importTask(input: $i) { created } }"
PERSONA = 'mutation($a: ID!) { setPersona(agentId: $a, input: {role: "helper"}) { role } }'
REMEMBER = "mutation($i: RememberInput!) { remember(input: $i) { recordId } }"
NOTE = {"type": "object", "properties": {"text": {"type": "string"}}}


async def graph_nodes(stack: Stack, tenant: str) -> dict[str, int]:
    rows = await run_cypher(
        stack,
        "MATCH (n {tenant: $tenant}) UNWIND labels(n) AS label RETURN label, count(*) AS n",
        tenant=tenant,
    )
    return {r["label"]: r["n"] for r in rows}


async def refused(api: Api, tenant: str, query: str, variables: dict[str, Any]) -> None:
    body = await api.gql(query, variables, tenant=tenant)
    assert codes([body]) == ["QUOTA_EXCEEDED"], body


async def records(api: Api, tenant: str, stack: Stack) -> int:
    await api.data(SCHEMA, {"s": NOTE}, tenant=tenant)  # the schema: one item
    for n in range(2):
        await api.data(RECORD, {"d": {"text": f"r{n}"}}, tenant=tenant)
    await refused(api, tenant, RECORD, {"d": {"text": "r2"}})
    remember = {"kind": "STRUCTURED", "schema": "note", "data": {"text": "r3"}}
    await refused(api, tenant, REMEMBER, {"i": remember})
    return 1 + len((await api.data(RECORDS, tenant=tenant))["records"])


async def messages(api: Api, tenant: str, stack: Stack) -> int:
    for n in range(3):
        await api.data(MESSAGE, {"c": f"hello {n}"}, tenant=tenant)
    await refused(api, tenant, MESSAGE, {"c": "one too many"})
    return len((await api.data(HISTORY, tenant=tenant))["conversation"])


async def working(api: Api, tenant: str, stack: Stack) -> int:
    for n in range(3):
        await api.data(WORKING, {"k": f"k{n}"}, tenant=tenant)
    await refused(api, tenant, WORKING, {"k": "k3"})
    return len((await api.data(PAD, tenant=tenant))["workingMemory"])


async def tasks(api: Api, tenant: str, stack: Stack) -> int:
    for n in range(3):
        await api.data(TASK, {"d": f"task {n}"}, tenant=tenant)
    await refused(api, tenant, TASK, {"d": "task 3"})
    return len((await api.data(TASKS, tenant=tenant))["tasks"]["items"])


async def steps(api: Api, tenant: str, stack: Stack) -> int:
    unowned = 'mutation { createTask(description: "a task") { id } }'
    task = (await api.data(unowned, tenant=tenant))["createTask"]["id"]
    await api.data(STEP, {"t": task, "a": "first"}, tenant=tenant)
    await api.data(STEP, {"t": task, "a": "second"}, tenant=tenant)
    await refused(api, tenant, STEP, {"t": task, "a": "third"})
    return 1 + len((await api.data(STEPS, {"t": task}, tenant=tenant))["task"]["steps"])


async def transfers(api: Api, tenant: str, stack: Stack) -> int:
    task = (await api.data(TASK, {"d": "a task"}, tenant=tenant))["createTask"]["id"]
    moves = {"t": task, "f": "ada", "to": "bob", "g": 1}
    await api.data(TRANSFER, moves, tenant=tenant)
    await api.data(TRANSFER, moves | {"f": "bob", "to": "cy", "g": 2}, tenant=tenant)
    await refused(api, tenant, TRANSFER, moves | {"f": "cy", "to": "dee", "g": 3})
    handle = await api.data(
        "query($t: ID!) { task(id: $t) { generation } }", {"t": task}, tenant=tenant
    )
    assert handle["task"]["generation"] == 3  # the refused hand-over did not happen
    return 1 + (await graph_nodes(stack, tenant)).get("Transfer", 0)


async def episodes(api: Api, tenant: str, stack: Stack) -> int:
    # one episode with its new task and a step is three items: it fits
    first = {"outcome": "done", "success": True, "description": "a job", "steps": [{"action": "a"}]}
    await api.data(EPISODE, {"i": first}, tenant=tenant)
    # one more with its new task and two steps would be four: refused whole, nothing stored
    more = first | {"steps": [{"action": "a"}, {"action": "b"}]}
    await refused(api, tenant, EPISODE, {"i": more})
    nodes = await graph_nodes(stack, tenant)
    assert (nodes.get("Task"), nodes.get("Step"), nodes.get("Episode")) == (1, 1, 1), nodes
    return 3


async def imported(api: Api, tenant: str, stack: Stack) -> int:
    task = {
        "importId": "exported-1",
        "description": "an exported task",
        "steps": [{"action": f"s{n}", "order": n} for n in range(3)],
    }
    await refused(api, tenant, IMPORT, {"i": task})  # four items
    assert await graph_nodes(stack, tenant) == {}
    await api.data(IMPORT, {"i": task | {"steps": task["steps"][:2]}}, tenant=tenant)
    nodes = await graph_nodes(stack, tenant)
    return nodes.get("Task", 0) + nodes.get("Step", 0)


async def personas(api: Api, tenant: str, stack: Stack) -> int:
    for agent in ("a1", "a2", "a3"):
        await api.data(PERSONA, {"a": agent}, tenant=tenant)
    await refused(api, tenant, PERSONA, {"a": "a4"})
    return (await graph_nodes(stack, tenant)).get("Persona", 0)


def kg_entity(name: str) -> dict[str, Any]:
    return {"name": name, "entityType": "thing", "observations": []}


async def kg_entities(api: Api, tenant: str, stack: Stack) -> int:
    service = api.app.state.service
    for n in range(3):
        await call(service, tenant, "create_entities", {"entities": [kg_entity(f"e{n}")]})
    with pytest.raises(QuotaExceeded):
        await call(service, tenant, "create_entities", {"entities": [kg_entity("e3")]})
    return (await graph_nodes(stack, tenant)).get("KGEntity", 0)


async def kg_relations(api: Api, tenant: str, stack: Stack) -> int:
    service = api.app.state.service
    await call(service, tenant, "create_entities", {"entities": [kg_entity("a"), kg_entity("b")]})
    link = {"relations": [{"from": "a", "to": "b", "relationType": "knows"}]}
    await call(service, tenant, "create_relations", link)
    with pytest.raises(QuotaExceeded):
        back = {"relations": [{"from": "b", "to": "a", "relationType": "knows"}]}
        await call(service, tenant, "create_relations", back)
    rows = await run_cypher(
        stack,
        "MATCH (:KGEntity {tenant: $tenant})-[r:KG_RELATION]->() RETURN count(r) AS n",
        tenant=tenant,
    )
    return (await graph_nodes(stack, tenant)).get("KGEntity", 0) + int(rows[0]["n"])


KINDS: dict[str, Callable[[Api, str, Stack], Awaitable[int]]] = {
    "knowledge-graph entities": kg_entities,
    "knowledge-graph relations": kg_relations,
    "records": records,
    "messages": messages,
    "working memory": working,
    "tasks": tasks,
    "steps": steps,
    "hand-overs": transfers,
    "episodes": episodes,
    "imported tasks": imported,
    "personas": personas,
}


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_counts_against_the_quota(stack: Stack, kind: str) -> None:
    async with limited_api(stack, quota_memories=3) as api:
        a, b = list(api.keys)
        # three items fit, the fourth is refused, and the refused write stored nothing
        assert await KINDS[kind](api, a, stack) == 3
        # the other tenant has a budget of its own
        assert "errors" not in await api.gql(MESSAGE, {"c": "hi"}, tenant=b)


async def test_one_budget_for_every_kind(stack: Stack) -> None:
    async with limited_api(stack, quota_memories=4) as api:
        a, _ = list(api.keys)
        await api.data(ADD, {"input": {"sessionId": "q", "content": "a memory"}}, tenant=a)
        await api.data(MESSAGE, {"c": "a message"}, tenant=a)
        await api.data(WORKING, {"k": "a key"}, tenant=a)
        await api.data(TASK, {"d": "a task"}, tenant=a)
        await refused(api, a, SCHEMA, {"s": NOTE})
        body = await api.gql(ADD, {"input": {"sessionId": "q", "content": "more"}}, tenant=a)
        assert codes([body]) == ["QUOTA_EXCEEDED"]
        assert body["errors"][0]["extensions"]["memories"] == 4


async def test_bytes_of_every_kind_count(stack: Stack) -> None:
    async with limited_api(stack, quota_bytes=2_000) as api:
        a, _ = list(api.keys)
        await api.data(SCHEMA, {"s": NOTE}, tenant=a)
        await api.data(RECORD, {"d": {"text": "x" * 1_200}}, tenant=a)
        await refused(api, a, RECORD, {"d": {"text": "y" * 1_200}})
        await refused(api, a, MESSAGE, {"c": "z" * 1_000})
        await api.data(MESSAGE, {"c": "short"}, tenant=a)


async def test_what_is_cleared_or_expires_is_given_back(stack: Stack) -> None:
    async with limited_api(stack, quota_memories=3) as api:
        a, _ = list(api.keys)
        task = (await api.data(TASK, {"d": "a task"}, tenant=a))["createTask"]["id"]
        pad = "mutation($t: ID!, $k: String!) { setWorkingMemory(taskId: $t, key: $k, value: 1) }"
        await api.data(pad, {"t": task, "k": "a"}, tenant=a)
        await api.data(pad, {"t": task, "k": "b"}, tenant=a)
        await refused(api, a, pad, {"t": task, "k": "c"})
        # completing the task clears its working memory: two places again
        await api.data(
            "mutation($t: ID!) { completeTask(taskId: $t) { id } }", {"t": task}, tenant=a
        )
        await api.data(MESSAGE, {"c": "one"}, tenant=a)
        await api.data(MESSAGE, {"c": "two"}, tenant=a)
        await refused(api, a, MESSAGE, {"c": "three"})
        # the session's history expires (its time to live, cut short here)
        async with stack.redis() as redis:
            assert await redis.pexpire(f"gm:{{{a}:chat}}:messages", 1), "no history in Redis"
        await api.data(MESSAGE, {"c": "three"}, tenant=a)
        await api.data(MESSAGE, {"c": "four"}, tenant=a)
        await refused(api, a, MESSAGE, {"c": "five"})


async def test_trimmed_history_is_given_back(stack: Stack) -> None:
    memory = MemoryConfig.model_validate({"shortTermMaxMessages": 2})
    async with limited_api(stack, quota_memories=3, memory=memory) as api:
        a, _ = list(api.keys)
        # the history keeps its last two: a chat goes on for ever within three items
        for n in range(12):
            await api.data(MESSAGE, {"c": f"message {n}"}, tenant=a)
        last = '{ conversation(sessionId: "chat", last: 2) { content } }'
        history = (await api.data(last, tenant=a))["conversation"]
        assert [m["content"] for m in history] == ["message 10", "message 11"]


async def test_the_exact_count_holds_every_kind(stack: Stack) -> None:
    async with limited_api(stack, quota_memories=8) as api:
        a, _ = list(api.keys)
        await api.data(SCHEMA, {"s": NOTE}, tenant=a)
        await api.data(RECORD, {"d": {"text": "r"}}, tenant=a)
        await api.data(MESSAGE, {"c": "m"}, tenant=a)
        await api.data(WORKING, {"k": "k"}, tenant=a)
        await api.data(PERSONA, {"a": "agent"}, tenant=a)
        episode = {"outcome": "ok", "success": True, "description": "d", "steps": [{"action": "a"}]}
        await api.data(EPISODE, {"i": episode}, tenant=a)  # task, step, episode
        # the running count drifted far (what a lost or doubled count looks like) ...
        async with stack.redis() as redis:
            await redis.hset(f"gm:{{{a}}}:admit:usage", mapping={"memories": 1_000})
        # ... so the next write counts exactly: eight items held, a ninth is refused
        body = await api.gql(MESSAGE, {"c": "n"}, tenant=a)
        assert codes([body]) == ["QUOTA_EXCEEDED"], body
        assert body["errors"][0]["extensions"]["memories"] == 8
        async with stack.redis() as redis:
            assert await redis.hget(f"gm:{{{a}}}:admit:usage", "memories") == "8"


async def test_the_exact_count_holds_the_knowledge_graph(stack: Stack) -> None:
    async with limited_api(stack, quota_memories=3) as api:
        a, _ = list(api.keys)
        service = api.app.state.service
        await call(service, a, "create_entities", {"entities": [kg_entity("x"), kg_entity("y")]})
        link = {"relations": [{"from": "x", "to": "y", "relationType": "knows"}]}
        await call(service, a, "create_relations", link)
        async with stack.redis() as redis:
            await redis.hset(f"gm:{{{a}}}:admit:usage", mapping={"memories": 1_000})
        with pytest.raises(QuotaExceeded) as caught:
            await call(service, a, "create_entities", {"entities": [kg_entity("z")]})
        assert caught.value.details["memories"] == 3
        # deleting gives back: the entity and its relation
        await call(service, a, "delete_entities", {"entityNames": ["y"]})
        async with stack.redis() as redis:
            await redis.hset(f"gm:{{{a}}}:admit:usage", mapping={"memories": 1_000})
        await call(service, a, "create_entities", {"entities": [kg_entity("z")]})
