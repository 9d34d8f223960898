"""Entity memory over the API: extraction, relations, resolution, time, forgetting
(docs/concepts.md#memory-types)."""

from __future__ import annotations

import asyncio
from typing import Any

from graphmem.memory import Memory
from tests.conftest import Api, Stack, run_cypher

ADD = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
SPILL = "mutation($s: ID!) { spill(sessionId: $s, count: 100) { spilledCount } }"
ENTITIES = """query($u: ID!, $t: EntityType) { entities(userId: $u, type: $t) {
  count entity { id name type aliases mentionCount mergedFrom } } }"""
ENTITY = """query($id: ID!) { entity(id: $id) {
  entity { id name type aliases mentionCount mergedFrom }
  mentions { memoryId surface via }
  relations { type direction otherId otherName validFrom validUntil sources closedBy }
  cooccurring { otherId weight } } }"""
FORGET = "mutation($id: ID!) { forget(itemId: $id) }"
HISTORY = ENTITY.replace(
    "($id: ID!) { entity(id: $id)", "($id: ID!) { entity(id: $id, includeHistory: true)"
)


async def remember(
    api: Api,
    texts: list[str],
    user: str = "ada",
    session: str = "s",
    tenant: str | None = None,
    at: list[str] | None = None,
) -> list[str]:
    ids = []
    for n, text in enumerate(texts):
        spec: dict[str, Any] = {"sessionId": session, "userId": user, "content": text}
        if at:
            spec["occurredAt"] = at[n]
        ids.append((await api.data(ADD, {"i": spec}, tenant=tenant))["addMemory"]["id"])
    await api.data(SPILL, {"s": session}, tenant=tenant)
    return ids


cypher = run_cypher


async def test_a_sentence_gives_places_relations_and_user_mentions(api: Api, stack: Stack) -> None:
    tenant = next(iter(api.keys))
    await remember(api, ["I loved dinner at Le Chat Noir in Paris near the Eiffel Tower"])
    rows = (await api.data(ENTITIES, {"u": "ada"}))["entities"]
    names = {r["entity"]["name"]: r["entity"]["type"] for r in rows}
    assert names == {"Le Chat Noir": "ORGANIZATION", "Paris": "PLACE", "Eiffel Tower": "PLACE"}
    places = (await api.data(ENTITIES, {"u": "ada", "t": "PLACE"}))["entities"]
    assert {r["entity"]["name"] for r in places} == {"Paris", "Eiffel Tower"}

    detail = (await api.data(ENTITY, {"id": "ORGANIZATION|le chat noir"}))["entity"]
    rels = {(r["type"], r["direction"], r["otherName"]) for r in detail["relations"]}
    assert rels == {("LOCATED_IN", "out", "Paris"), ("NEAR", "out", "Eiffel Tower")}
    assert all(r["validUntil"] is None and len(r["sources"]) == 1 for r in detail["relations"])
    assert {c["otherId"] for c in detail["cooccurring"]} == {"PLACE|paris", "PLACE|eiffel tower"}

    mentioned = await cypher(
        stack,
        "MATCH (u:User {tenant: $t, id: 'ada'})-[r:MENTIONED]->(e:Entity) "
        "RETURN e.name AS name, r.count AS count, r.firstSeen IS NOT NULL AS seen",
        t=tenant,
    )
    assert sorted((m["name"], m["count"], m["seen"]) for m in mentioned) == [
        ("Eiffel Tower", 1, True),
        ("Le Chat Noir", 1, True),
        ("Paris", 1, True),
    ]


async def test_variants_merge_with_provenance_and_split_undoes_it(api: Api) -> None:
    await remember(
        api,
        [
            "We walked to the Eiffel Tower.",
            "The Eiffel Tower's lights were on.",
            "Tickets for Eiffel Tower sold out.",
        ],
    )
    detail = (await api.data(ENTITY, {"id": "PLACE|eiffel tower"}))["entity"]
    assert detail["entity"]["mentionCount"] == 3
    surfaces = sorted(m["surface"] for m in detail["mentions"])
    assert surfaces == ["Eiffel Tower", "The Eiffel Tower's", "the Eiffel Tower"]
    assert {m["via"] for m in detail["mentions"]} == {"exact", "normalised"}
    assert len(detail["entity"]["aliases"]) == 3

    split = "mutation($id: ID!, $s: String!) { splitEntity(id: $id, surface: $s) }"
    new_id = (await api.data(split, {"id": "PLACE|eiffel tower", "s": "The Eiffel Tower's"}))[
        "splitEntity"
    ]
    main = (await api.data(ENTITY, {"id": "PLACE|eiffel tower"}))["entity"]
    apart = (await api.data(ENTITY, {"id": new_id}))["entity"]
    assert main["entity"]["mentionCount"] == 2 and apart["entity"]["mentionCount"] == 1
    assert [m["surface"] for m in apart["mentions"]] == ["The Eiffel Tower's"]
    # the split holds for later mentions written the same way
    await remember(api, ["The Eiffel Tower's shadow was long."], session="s2")
    apart = (await api.data(ENTITY, {"id": new_id}))["entity"]
    assert apart["entity"]["mentionCount"] == 2
    assert {m["via"] for m in apart["mentions"]} == {"split"}


async def test_other_tenants_never_merge(api: Api, stack: Stack) -> None:
    a, b = list(api.keys)
    await remember(api, ["We met Ada Lovelace in London."], tenant=a)
    await remember(api, ["Ada Lovelace lived in London."], tenant=b)
    rows = await cypher(
        stack,
        "MATCH (e:Entity {key: 'PERSON|ada lovelace'}) WHERE e.tenant IN $ts "
        "RETURN e.tenant AS tenant, e.mentionCount AS n",
        ts=[a, b],
    )
    assert sorted((r["tenant"], r["n"]) for r in rows) == sorted([(a, 1), (b, 1)])
    body = await api.gql(
        'mutation { mergeEntities(sourceId: "PERSON|ada lovelace", '
        'targetId: "PLACE|london") { mergeId } }',
        tenant=b,
    )
    assert "errors" not in body
    # tenant a's entities are untouched by b's merge
    detail = (await api.data(ENTITY, {"id": "PERSON|ada lovelace"}, tenant=a))["entity"]
    assert detail["entity"]["mergedFrom"] == [] and detail["entity"]["id"] == "PERSON|ada lovelace"


async def test_manual_merge_folds_and_undo_restores_both(api: Api) -> None:
    await remember(
        api, ["Grace flew to New York City.", "Grace loves NYC in autumn.", "NYC was cold."]
    )
    # the small English model calls NYC an organisation: merging fixes what NER got wrong
    cities = {"PLACE|new york city", "ORGANIZATION|nyc"}

    async def counts() -> dict[str, int]:
        rows = (await api.data(ENTITIES, {"u": "ada"}))["entities"]
        return {r["entity"]["id"]: r["count"] for r in rows if r["entity"]["id"] in cities}

    before = await counts()
    assert before == {"PLACE|new york city": 1, "ORGANIZATION|nyc": 2}
    merge = """mutation { mergeEntities(sourceId: "ORGANIZATION|nyc",
               targetId: "PLACE|new york city", reason: "same city") {
               mergeId sourceId targetId } }"""
    merged = (await api.data(merge))["mergeEntities"]
    folded = [
        r
        for r in (await api.data(ENTITIES, {"u": "ada"}))["entities"]
        if r["entity"]["id"] in cities
    ]
    assert [(r["entity"]["id"], r["count"], r["entity"]["mergedFrom"]) for r in folded] == [
        ("PLACE|new york city", 3, ["ORGANIZATION|nyc"])
    ]
    target = (await api.data(ENTITY, {"id": "ORGANIZATION|nyc"}))["entity"]  # the target
    assert target["entity"]["id"] == "PLACE|new york city" and len(target["mentions"]) == 3

    undo = "mutation($m: ID!) { undoMerge(mergeId: $m) { sourceId targetId } }"
    assert (await api.data(undo, {"m": merged["mergeId"]}))["undoMerge"] == {
        "sourceId": "ORGANIZATION|nyc",
        "targetId": "PLACE|new york city",
    }
    assert await counts() == before
    again = await api.gql(undo, {"m": merged["mergeId"]})
    assert again["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_alias_resolves_later_mentions(api: Api) -> None:
    await remember(api, ["Grace flew to New York City."])
    alias = 'mutation { setEntityAlias(alias: "NYC", canonical: "New York City") }'
    assert (await api.data(alias))["setEntityAlias"] == "PLACE|new york city"
    await remember(api, ["NYC was cold."], session="s2")
    detail = (await api.data(ENTITY, {"id": "PLACE|new york city"}))["entity"]
    assert sorted((m["surface"], m["via"]) for m in detail["mentions"]) == [
        ("NYC", "alias"),
        ("New York City", "exact"),
    ]


async def test_newer_contradicting_fact_closes_the_old_edge(api: Api) -> None:
    first, second = await remember(
        api,
        ["Alice works for Acme.", "Alice now works for Initech."],
        at=["2025-01-10T09:00:00+00:00", "2025-06-01T09:00:00+00:00"],
    )
    current = (await api.data(ENTITY, {"id": "PERSON|alice"}))["entity"]
    assert [r["otherName"] for r in current["relations"] if r["type"] == "WORKS_FOR"] == [
        "Initech"
    ]  # the default read: what holds now
    detail = (await api.data(HISTORY, {"id": "PERSON|alice"}))["entity"]
    works = {r["otherName"]: r for r in detail["relations"] if r["type"] == "WORKS_FOR"}
    assert set(works) == {"Acme", "Initech"}  # both kept
    assert works["Acme"]["validUntil"].startswith("2025-06-01")
    assert works["Acme"]["closedBy"] == second and works["Acme"]["sources"] == [first]
    assert works["Initech"]["validUntil"] is None and works["Initech"]["sources"] == [second]
    assert works["Initech"]["validFrom"].startswith("2025-06-01")


async def test_forget_leaves_no_orphans(api: Api, stack: Stack) -> None:
    tenant = next(iter(api.keys))
    keep, drop = await remember(
        api, ["Bob met Carol in Lisbon.", "Dinner at Casa Azul in Porto near the Douro."]
    )
    before = await cypher(stack, "MATCH (e:Entity {tenant: $t}) RETURN e.name AS n", t=tenant)
    assert {"Porto", "Casa Azul", "Lisbon"} <= {r["n"] for r in before}
    assert (await api.data(FORGET, {"id": drop}))["forget"] is True
    counts = (
        await cypher(
            stack,
            """
        MATCH (e:Entity {tenant: $t})
        RETURN count(e) AS entities,
               count { MATCH (x:Entity {tenant: $t})
                       WHERE NOT (:Memory)-[:MENTIONS]->(x) } AS orphans,
               count { MATCH (:Entity {tenant: $t})-[r]->(:Entity) WHERE size(r.sources) = 0 }
                 AS empty_relations,
               count { MATCH (:User {tenant: $t})-[r:MENTIONED]->(x:Entity)
                       WHERE NOT (:Memory {userId: 'ada'})-[:MENTIONS]->(x) } AS stale_mentions,
               count { MATCH (m:Memory {tenant: $t, id: $id}) } AS memory
    """,
            t=tenant,
            id=drop,
        )
    )[0]
    assert counts["orphans"] == 0 and counts["empty_relations"] == 0
    assert counts["stale_mentions"] == 0 and counts["memory"] == 0
    after = {
        r["n"]
        for r in await cypher(stack, "MATCH (e:Entity {tenant: $t}) RETURN e.name AS n", t=tenant)
    }
    assert "Porto" not in after and "Lisbon" in after and "Bob" in after
    assert counts["entities"] == len(after)
    # the kept memory's relations are intact
    kept = await cypher(
        stack,
        "MATCH (:Memory {tenant: $t, id: $id})-[:MENTIONS]->(e) RETURN count(e) AS n",
        t=tenant,
        id=keep,
    )
    assert kept[0]["n"] >= 2


async def test_concurrent_and_repeated_writes_count_each_mention_once(
    service: Memory, replica: Memory, stack: Stack, tenant: str
) -> None:
    """Counts are added per write, not recounted (a popular entity made every write cost
    more); two replicas writing the same entity at once, and a retry beside the
    original, still count each mention once, with the first and last time right."""
    assert service.entities is not None and replica.entities is not None
    ids = [f"m{i}" for i in range(40)]
    await cypher(
        stack,
        "UNWIND range(0, size($ids) - 1) AS i "
        "CREATE (:Memory {tenant: $t, id: $ids[i], userId: 'u' + (i % 3), "
        "createdAt: datetime('2025-01-01T00:00:00Z') + duration({days: i})})",
        t=tenant,
        ids=ids,
    )

    def mentions(batch: list[str]) -> list[dict[str, Any]]:
        return [
            {
                "memoryId": m,
                "key": key,
                "name": key.split("|")[1].title(),
                "type": "PERSON",
                "label": "PERSON",
                "surface": key.split("|")[1].title(),
                "via": "exact",
                "start": 0,
                "end": 3,
                "at": None,
            }
            for m in batch
            for key in ("PERSON|bob", "PERSON|eve")
        ]

    batches = [ids[i : i + 5] for i in range(0, len(ids), 5)]
    writes = [
        store.write(tenant, mentions(batch), [], [])
        for batch in batches
        for store in (service.entities.store, replica.entities.store)  # each batch twice
    ]
    await asyncio.gather(*writes)
    rows = await cypher(
        stack,
        "MATCH (e:Entity {tenant: $t}) "
        "RETURN e.key AS key, e.mentionCount AS n, toString(e.firstSeen) AS first, "
        "toString(e.lastSeen) AS last, COUNT { (e)<-[:MENTIONS]-() } AS edges, "
        "COUNT { (e)<-[r:MENTIONS]-() WHERE r.uncounted } AS uncounted ORDER BY key",
        t=tenant,
    )
    assert [(r["key"], r["n"], r["edges"], r["uncounted"]) for r in rows] == [
        ("PERSON|bob", 40, 40, 0),
        ("PERSON|eve", 40, 40, 0),
    ]
    assert {(r["first"], r["last"]) for r in rows} == {
        ("2025-01-01T00:00:00Z", "2025-02-09T00:00:00Z")
    }
    users = await cypher(
        stack,
        "MATCH (u:User {tenant: $t})-[r:MENTIONED]->(e:Entity {key: 'PERSON|bob'}) "
        "RETURN u.id AS user, r.count AS n ORDER BY user",
        t=tenant,
    )
    assert [(u["user"], u["n"]) for u in users] == [("u0", 14), ("u1", 13), ("u2", 13)]
    # a forget recounts from the edges, and the counts stay the same as added ones
    assert await service.entities.store.refresh(tenant, ["PERSON|bob"]) == 0
    again = await cypher(
        stack,
        "MATCH (:User {tenant: $t, id: 'u0'})-[r:MENTIONED]->(e:Entity {key: 'PERSON|bob'}) "
        "RETURN e.mentionCount AS n, r.count AS mine",
        t=tenant,
    )
    assert again == [{"n": 40, "mine": 14}]
