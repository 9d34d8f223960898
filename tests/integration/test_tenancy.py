"""Keys decide the tenant; tenants never see each other's memories."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import Api, LiveApi
from tests.integration.test_mcp_memory_server import over_http
from tests.support.documents import ADD, HOT, RECALL, SEARCH, SPILL, STATUS
from tests.support.feed import next_event, subscription


async def test_missing_key_gets_401_with_graphql_error_body(api: Api) -> None:
    response = await api.client.post("/graphql", json={"query": '{ hot(sessionId: "s") { id } }'})
    assert response.status_code == 401
    body = response.json()
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_wrong_key_and_wrong_scheme_get_401(api: Api) -> None:
    for header in ("Bearer not-a-key", "Basic Zm9vOmJhcg==", "Bearer", ""):
        response = await api.client.post(
            "/graphql",
            json={"query": '{ hot(sessionId: "s") { id } }'},
            headers={"Authorization": header},
        )
        assert response.status_code == 401, header
        assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_health_endpoints_need_no_key(api: Api) -> None:
    assert (await api.client.get("/healthz")).json() == {"status": "ok"}
    ready = await api.client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "neo4j": "ok", "redis": "ok"}


async def test_tenants_cannot_read_recall_spill_count_or_forget_each_other(api: Api) -> None:
    a, b = list(api.keys)
    # Same session id in both tenants: the session id is not a capability.
    item = (
        await api.data(
            ADD,
            {
                "input": {
                    "sessionId": "shared",
                    "content": "A's secret budget is $50K",
                    "userId": "u",
                }
            },
            tenant=a,
        )
    )["addMemory"]
    assert (await api.data(HOT, {"s": "shared"}, tenant=b))["hot"] == []
    # B spilling "shared" moves nothing of A's
    spill_b = (await api.data(SPILL, {"s": "shared"}, tenant=b))["spill"]
    assert spill_b["spilledCount"] == 0
    body = await api.gql(SPILL, {"s": "shared", "ids": [item["id"]]}, tenant=b)
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert len((await api.data(HOT, {"s": "shared"}, tenant=a))["hot"]) == 1

    await api.data(SPILL, {"s": "shared"}, tenant=a)
    for scope in ({"sessionId": "shared"}, {"userId": "u"}, {}):
        recall = (
            await api.data(
                RECALL,
                {"input": {"query": "secret budget", "autoPromote": False, **scope}},
                tenant=b,
            )
        )["recall"]
        assert recall["items"] == [], scope
    assert (await api.data(SEARCH, {"q": "secret budget"}, tenant=b))["search"] == []
    status_b = (await api.data(STATUS, {"s": "shared"}, tenant=b))["memoryStatus"]
    assert (status_b["hot"]["items"], status_b["warm"]["items"], status_b["cold"]["items"]) == (
        0,
        0,
        0,
    )
    promote = await api.gql(
        "mutation P($id: ID!) { promote(itemId: $id) { id } }", {"id": item["id"]}, tenant=b
    )
    assert promote["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    forget = await api.data(
        "mutation F($id: ID!) { forget(itemId: $id) }", {"id": item["id"]}, tenant=b
    )
    assert forget["forget"] is False

    # ... and A still has everything
    status_a = (await api.data(STATUS, {"s": "shared"}, tenant=a))["memoryStatus"]
    assert status_a["cold"]["items"] == 1
    recall_a = (
        await api.data(
            RECALL,
            {"input": {"sessionId": "shared", "query": "secret budget", "autoPromote": False}},
            tenant=a,
        )
    )["recall"]
    assert [i["id"] for i in recall_a["items"]] == [item["id"]]


async def test_tenants_cannot_retract_or_read_each_others_history(api: Api) -> None:
    """retract, unretract and every read at a moment (asOf, validAt, includeHistory)
    are scoped by the key's tenant like the rest (docs/concepts.md, "Two clocks")."""
    a, b = list(api.keys)
    spec = {"sessionId": "shared", "userId": "u", "content": "A lives at Maison Verte in Oslo."}
    item = (await api.data(ADD, {"input": spec}, tenant=a))["addMemory"]
    await api.data(SPILL, {"s": "shared"}, tenant=a)
    retract = 'mutation($i: [ID!]!) { retract(itemIds: $i, reason: "b") { changedIds } }'
    unretract = "mutation($i: [ID!]!) { unretract(itemIds: $i) { changedIds } }"
    body = await api.gql(retract, {"i": [item["id"]]}, tenant=b)
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert (await api.data(retract, {"i": [item["id"]]}, tenant=a))["retract"]["changedIds"]
    body = await api.gql(unretract, {"i": [item["id"]]}, tenant=b)
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    at = "asOf: $a, validAt: $v, includeHistory: true"
    reads = {
        "search": f'query($a: DateTime, $v: DateTime) {{ search(query: "Maison Verte Oslo", {at}) '
        "{ item { id } } }",
        "memories": f'query($a: DateTime, $v: DateTime) {{ memories(userId: "u", {at}) '
        "{ items { id } } }",
        "entities": f'query($a: DateTime, $v: DateTime) {{ entities(userId: "u", {at}) '
        "{ entity { id } } }",
    }
    when = {"a": "2999-01-01T00:00:00Z", "v": "2999-01-01T00:00:00Z"}
    for name, query in reads.items():
        assert (await api.data(query, when, tenant=b))[name] in ([], {"items": []}), name
        assert (await api.data(query, when, tenant=a))[name] not in ([], {"items": []}), name
    recall = {"query": "Maison Verte Oslo", "autoPromote": False, "includeHistory": True}
    assert (await api.data(RECALL, {"input": recall}, tenant=b))["recall"]["items"] == []
    entity = (
        'query { entity(id: "ORGANIZATION|maison verte", includeHistory: true) '
        "{ mentions { memoryId } relations { otherName } } }"
    )
    body = await api.gql(entity, {}, tenant=b)
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    seen = (await api.data(entity, {}, tenant=a))["entity"]
    assert [m["memoryId"] for m in seen["mentions"]] == [item["id"]]


async def test_item_and_knowledge_graph_events_reach_only_their_tenants_subscribers(
    live_api: LiveApi,
) -> None:
    mine, other = list(live_api.keys)
    port = int(live_api.url.rsplit(":", 1)[1])
    put = "mutation($i: [ItemPutInput!]!) { putItems(items: $i) }"
    merge = """mutation($e: [KgEntityInput!], $r: [KgRelationInput!]) {
      mergeKnowledgeGraph(entities: $e, relations: $r) { entitiesCreated } }"""
    async with (
        subscription(port, live_api.keys[mine]) as ws,
        subscription(port, live_api.keys[other]) as stranger,
    ):
        await live_api.gql(
            put, {"i": [{"namespace": ["users", "ada"], "key": "k", "valueJson": "{}"}]}, mine
        )
        event = await next_event(ws)
        assert event["kind"] == "ITEMS_PUT"
        assert event["data"]["items"] == [{"namespace": ["users", "ada"], "key": "k"}]
        await live_api.gql(put, {"i": [{"namespace": ["users", "ada"], "key": "k"}]}, mine)
        assert (await next_event(ws))["kind"] == "ITEMS_DELETED"
        entities = [
            {"name": n, "entityType": "t", "observations": ["seen"]} for n in ("Ada", "Oslo")
        ]
        relation = {"from": "Ada", "to": "Oslo", "relationType": "lives_in"}
        await live_api.gql(merge, {"e": entities, "r": [relation]}, mine)
        created = await next_event(ws)
        assert created["kind"] == "KG_ENTITIES_CREATED"
        assert created["data"]["entityNames"] == ["Ada", "Oslo"]
        linked = await next_event(ws)
        assert linked["kind"] == "KG_RELATIONS_CREATED"
        assert linked["data"]["relations"] == [relation]
        async with over_http(live_api, mine) as mcp:
            adds = {"observations": [{"entityName": "Ada", "contents": ["likes ramen"]}]}
            assert not (await mcp.call_tool("add_observations", adds)).is_error
            added = await next_event(ws)
            assert added["kind"] == "KG_OBSERVATIONS_ADDED"
            assert added["data"]["observations"] == [
                {"entityName": "Ada", "contents": ["likes ramen"]}
            ]
            drop = {"deletions": [{"entityName": "Ada", "observations": ["seen"]}]}
            assert not (await mcp.call_tool("delete_observations", drop)).is_error
            assert (await next_event(ws))["kind"] == "KG_OBSERVATIONS_DELETED"
            assert not (await mcp.call_tool("delete_relations", {"relations": [relation]})).is_error
            assert (await next_event(ws))["data"]["relations"] == [relation]
            assert not (await mcp.call_tool("delete_entities", {"entityNames": ["Oslo"]})).is_error
            gone = await next_event(ws)
            assert gone["kind"] == "KG_ENTITIES_DELETED" and gone["data"]["entityNames"] == ["Oslo"]
        # the other tenant's subscriber heard none of it
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(stranger.recv(), 2)


async def test_tenants_cannot_read_each_others_episodes_or_records_at_a_moment(api: Api) -> None:
    """priorKnowledge, similarEpisodes and records at a moment are scoped by the key's
    tenant too: a moment that sees everything recorded sees only the tenant's own."""
    a, b = list(api.keys)
    episode = """mutation { recordEpisode(input: {description: "Import the sales sheet",
      outcome: "imported", success: true, mappings: {Qty: "quantity"}}) { id } }"""
    await api.data(episode, tenant=a)
    schema = 'mutation { registerRecordSchema(name: "visit", schema: {type: "object"}) }'
    for tenant in (a, b):
        await api.data(schema, tenant=tenant)
    add = 'mutation { addRecord(schema: "visit", data: {place: "Oslo"}) { id } }'
    await api.data(add, tenant=a)
    at = 'asOf: "2999-01-01T00:00:00Z", validAt: "2999-01-01T00:00:00Z", includeHistory: true'
    prior = f'{{ priorKnowledge(query: "sales sheet", {at}) {{ votes {{ value }} }} }}'
    similar = f'{{ similarEpisodes(query: "sales sheet", {at}) {{ episode {{ id }} }} }}'
    records = '{ records(schema: "visit", asOf: "2999-01-01T00:00:00Z") { id } }'
    assert (await api.data(prior, tenant=b))["priorKnowledge"]["votes"] == []
    assert (await api.data(prior, tenant=a))["priorKnowledge"]["votes"] == [{"value": "quantity"}]
    assert (await api.data(similar, tenant=b))["similarEpisodes"] == []
    assert len((await api.data(similar, tenant=a))["similarEpisodes"]) == 1
    assert (await api.data(records, tenant=b))["records"] == []
    assert len((await api.data(records, tenant=a))["records"]) == 1
