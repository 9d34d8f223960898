"""Two clocks, corrections and reads at a moment (docs/concepts.md, "Two clocks"): a
scripted history read back before, between and after each change."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from graphmem.client import AsyncGraphmem, At
from tests.conftest import Api

ADD = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id recordedAt createdAt } }"
SPILL = "mutation($s: ID!) { spill(sessionId: $s, count: 100) { spilledCount } }"
RETRACT = """mutation($ids: [ID!]!, $r: String!) { retract(itemIds: $ids, reason: $r) {
  itemIds changedIds at } }"""
UNRETRACT = "mutation($ids: [ID!]!) { unretract(itemIds: $ids) { itemIds changedIds at } }"
MOMENT = "$a: DateTime, $v: DateTime, $h: Boolean! = false"
AT = "asOf: $a, validAt: $v, includeHistory: $h"
ENTITY = f"""query($id: ID!, {MOMENT}) {{ entity(id: $id, {AT}) {{
  mentions {{ memoryId }}
  relations {{ type otherName validFrom validUntil closedBy recordedAt closedAt }} }} }}"""
ENTITIES = f"""query($u: ID!, {MOMENT}) {{ entities(userId: $u, {AT}) {{
  count entity {{ name }} }} }}"""
SEARCH = f"""query($q: String!, $u: ID, {MOMENT}) {{
  search(query: $q, userId: $u, limit: 10, {AT}) {{ score item {{ id content }} }} }}"""
RECALL = """mutation($i: RecallInput!) { recall(input: $i) { items { id } promoted } }"""
MEMORIES = f"""query($u: ID, {MOMENT}) {{ memories(userId: $u, {AT}) {{
  items {{ id tier recordedAt retractedAt retractReason }} }} }}"""
HOT = "query($s: ID!) { hot(sessionId: $s) { id } }"

PARIS = "Ada lives at Maison Verte in Paris."
BERLIN = "Ada lives at Maison Verte in Berlin."
ROME = "Ada lives at Maison Verte in Rome."
HOUSE = "ORGANIZATION|maison verte"


async def tick() -> str:
    """Now, as ISO text, with the clock moved on a little either side: every write of
    the history lands strictly between two ticks."""
    await asyncio.sleep(0.05)
    now = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.05)
    return now


async def remember(api: Api, text: str, at: str, session: str = "s") -> str:
    spec = {"sessionId": session, "userId": "ada", "content": text, "occurredAt": at}
    item = (await api.data(ADD, {"i": spec}))["addMemory"]
    await api.data(SPILL, {"s": session})
    return str(item["id"])


def moment(a: str | None = None, v: str | None = None, h: bool = False) -> dict[str, Any]:
    return {"a": a, "v": v, "h": h}


async def places(api: Api, **at: Any) -> list[str]:
    detail = (await api.data(ENTITY, {"id": HOUSE, **moment(**at)}))["entity"]
    return sorted(r["otherName"] for r in detail["relations"] if r["type"] == "LOCATED_IN")


async def found(api: Api, **at: Any) -> list[str]:
    rows = await api.data(SEARCH, {"q": "Where does Ada live?", "u": "ada", **moment(**at)})
    return [r["item"]["content"] for r in rows["search"]]


async def named(api: Api, **at: Any) -> set[str]:
    rows = (await api.data(ENTITIES, {"u": "ada", **moment(**at)}))["entities"]
    return {r["entity"]["name"] for r in rows}


async def test_a_history_reads_differently_before_between_and_after(api: Api) -> None:
    t0 = await tick()
    paris = await remember(api, PARIS, "2020-03-01T09:00:00+00:00")
    t1 = await tick()
    berlin = await remember(api, BERLIN, "2023-05-01T09:00:00+00:00")
    t2 = await tick()
    rome = await remember(api, ROME, "2024-02-01T09:00:00+00:00")  # wrong
    t3 = await tick()
    done = (await api.data(RETRACT, {"ids": [rome], "r": "never lived in Rome"}))["retract"]
    assert done["changedIds"] == [rome]
    t4 = await tick()

    # the default read: current facts only (Rome retracted, so Berlin holds again)
    assert await places(api) == ["Berlin"]
    assert await places(api, h=True) == ["Berlin", "Paris", "Rome"]
    # record time: what graphmem held then
    assert await places(api, a=t0) == []
    assert await places(api, a=t1) == ["Paris"]
    assert await places(api, a=t2) == ["Berlin"]
    assert await places(api, a=t3) == ["Rome"]
    assert await places(api, a=t4) == ["Berlin"]
    # valid time: what was true then, as graphmem holds it now
    assert await places(api, v="2021-01-01T00:00:00Z") == ["Paris"]
    assert await places(api, v="2023-06-01T00:00:00Z") == ["Berlin"]
    assert await places(api, v="2024-06-01T00:00:00Z") == ["Berlin"]
    assert await places(api, v="2019-01-01T00:00:00Z") == []
    # both: what graphmem believed at t3 about 2024 (Rome), and about 2021 (Paris)
    assert await places(api, a=t3, v="2024-06-01T00:00:00Z") == ["Rome"]
    assert await places(api, a=t3, v="2021-01-01T00:00:00Z") == ["Paris"]
    closed = (await api.data(ENTITY, {"id": HOUSE, **moment(h=True)}))["entity"]["relations"]
    paris_edge = next(r for r in closed if r["otherName"] == "Paris")
    assert paris_edge["closedBy"] == berlin and paris_edge["validUntil"].startswith("2023-05-01")
    assert t1 < paris_edge["closedAt"] < t2 and paris_edge["recordedAt"] < t1

    # entities: mentions seen at the moment
    assert await named(api, a=t0) == set()
    assert {"Paris", "Maison Verte"} <= await named(api, a=t1)
    assert "Berlin" not in await named(api, a=t1)
    assert "Rome" not in await named(api)  # only a retracted memory mentions it
    assert "Rome" in await named(api, a=t3)
    assert "Rome" in await named(api, h=True)
    assert "Berlin" not in await named(api, v="2021-01-01T00:00:00Z")

    # search: the retracted memory is gone by default; Paris, superseded, below Berlin
    now = await found(api)
    assert ROME not in now and now.index(BERLIN) < now.index(PARIS)
    assert await found(api, a=t0) == []
    assert await found(api, a=t1) == [PARIS]
    assert ROME in await found(api, a=t3)
    assert ROME in await found(api, h=True)
    assert await found(api, v="2021-01-01T00:00:00Z") == [PARIS]
    recall = {"query": "Where does Ada live?", "userId": "ada", "autoPromote": False}
    items = (await api.data(RECALL, {"i": {**recall, "asOf": t1}}))["recall"]["items"]
    assert [i["id"] for i in items] == [paris]
    items = (await api.data(RECALL, {"i": recall}))["recall"]["items"]
    assert rome not in {i["id"] for i in items} and berlin in {i["id"] for i in items}

    # memories: retracted ones only with history, kept with their reason
    listed = (await api.data(MEMORIES, {"u": "ada", **moment()}))["memories"]["items"]
    assert {i["id"] for i in listed} == {paris, berlin}
    history = (await api.data(MEMORIES, {"u": "ada", **moment(h=True)}))["memories"]["items"]
    kept = next(i for i in history if i["id"] == rome)
    assert kept["retractReason"] == "never lived in Rome" and t3 < kept["retractedAt"] < t4
    at_t3 = (await api.data(MEMORIES, {"u": "ada", **moment(a=t3)}))["memories"]["items"]
    assert {i["id"] for i in at_t3} == {paris, berlin, rome}

    # unretract: held again from now; the retraction stays in the history
    again = (await api.data(UNRETRACT, {"ids": [rome]}))["unretract"]
    assert again["changedIds"] == [rome]
    t5 = await tick()
    assert ROME in await found(api)
    assert ROME not in await found(api, a=t4)  # inside the retraction
    assert ROME in await found(api, a=t5)
    assert await places(api) == ["Rome"]
    assert await places(api, a=t4) == ["Berlin"]


async def test_a_hot_memory_is_spilled_then_retracted(api: Api) -> None:
    spec = {"sessionId": "h", "userId": "bo", "content": "Bo's locker code is 4711"}
    item = (await api.data(ADD, {"i": spec}))["addMemory"]
    assert item["recordedAt"] == item["createdAt"]
    done = (await api.data(RETRACT, {"ids": [item["id"]], "r": "wrong code"}))["retract"]
    assert done["changedIds"] == [item["id"]]
    assert (await api.data(HOT, {"s": "h"}))["hot"] == []  # it left Redis for the graph
    rows = (await api.data(SEARCH, {"q": "locker code", "u": "bo", **moment()}))["search"]
    assert rows == []
    rows = (await api.data(SEARCH, {"q": "locker code", "u": "bo", **moment(h=True)}))["search"]
    assert [r["item"]["id"] for r in rows] == [item["id"]]
    # retracting again changes nothing; promoting a retracted memory is refused
    again = (await api.data(RETRACT, {"ids": [item["id"]], "r": "x"}))["retract"]
    assert again["changedIds"] == []
    body = await api.gql("mutation($id: ID!) { promote(itemId: $id) { id } }", {"id": item["id"]})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"


async def test_hostile_moments_and_corrections_are_refused_cleanly(api: Api) -> None:
    ok = await api.gql(SEARCH, {"q": "x", "u": "ada", **moment(a="0001-01-01T00:00:00Z")})
    assert "errors" not in ok and ok["data"]["search"] == []
    far = {"a": "9999-12-31T23:59:59-18:00", "v": "0001-01-01T00:00:00+18:00", "h": True}
    ok = await api.gql(ENTITY, {"id": HOUSE, **far})
    assert "errors" not in ok or ok["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    for bad in ("2020-01-01T00:00:00+23:00", "2020-01-01T00:00:00+18:00:30", "not a date"):
        body = await api.gql(SEARCH, {"q": "x", "u": "ada", **moment(a=bad)})
        assert body["errors"], bad
        assert "Traceback" not in str(body) and "neo4j" not in str(body).lower()
    for variables in (
        {"ids": [], "r": ""},
        {"ids": ["mem_x"] * 501, "r": ""},
        {"ids": ["bad id!"], "r": ""},
        {"ids": ["mem_missing"], "r": "x" * 1001},
    ):
        body = await api.gql(RETRACT, variables)
        assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT", variables
    body = await api.gql(RETRACT, {"ids": ["mem_missing"], "r": ""})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    body = await api.gql(UNRETRACT, {"ids": ["mem_missing"]})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_the_client_carries_the_moment(api: Api) -> None:
    client = AsyncGraphmem("http://test", key=next(iter(api.keys.values())), http=api.client)
    t0 = datetime.now(UTC)
    await asyncio.sleep(0.05)
    item = await client.add("c", "Cy lives at Maison Verte in Lyon.", user_id="cy")
    await client.spill("c")
    assert await client.retract([item.id], "moved") == [item.id]
    now = await client.search("Maison Verte", user_id="cy")
    assert now == []
    kept = await client.search("Maison Verte", user_id="cy", at=At(include_history=True))
    assert [s.item.id for s in kept] == [item.id]
    page = await client.memories(user_id="cy", at=At(include_history=True))
    assert page.items[0].retract_reason == "moved" and page.items[0].retracted_at is not None
    assert await client.entities("cy", at=At(as_of=t0)) == []
    assert await client.unretract([item.id]) == [item.id]
    recalled = await client.recall("Maison Verte", user_id="cy", auto_promote=False)
    assert [i.id for i in recalled.items] == [item.id]
