"""Record time on episodes, reflections and structured records, and their reads at a
moment (docs/concepts.md, "Two clocks"): a scripted history read back before, between
and after each write."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from graphmem.client import AsyncGraphmem, At
from graphmem.memory import Memory
from graphmem.memory.episodes.patterns import compute_signature
from tests.conftest import Api, Stack, new_tenant, run_cypher

RECORD = """mutation($i: EpisodeInput!) { recordEpisode(input: $i) {
  id createdAt recordedAt } }"""
MOMENT = "$a: DateTime, $v: DateTime, $h: Boolean! = false"
AT = "asOf: $a, validAt: $v, includeHistory: $h"
PRIOR = f"""query($q: String!, $s: String, {MOMENT}) {{
  priorKnowledge(query: $q, signature: $s, {AT}) {{
    votes {{ key value confidence }}
    episodes {{ episode {{ id createdAt recordedAt }} }} }} }}"""
SIMILAR = f"""query($q: String!, {MOMENT}) {{ similarEpisodes(query: $q, {AT}) {{
  episode {{ id }} }} }}"""
REFLECT = "mutation { reflect { id recordedAt } }"
IMPORT = """mutation($i: TaskImportInput!) { importTask(input: $i) { task { episodeIds } } }"""
REGISTER = 'mutation($s: JSON!) { registerRecordSchema(name: "visit", schema: $s) }'
ADD_RECORD = (
    'mutation($d: JSON!) { addRecord(schema: "visit", data: $d) { id createdAt recordedAt } }'
)
RECORDS = """query($a: DateTime) { records(schema: "visit", asOf: $a) {
  id createdAt recordedAt data } }"""
COLUMNS = ["Qty", "Desc", "SKU"]
QUERY = "import the monthly sales sheet"


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def tick() -> str:
    """Now, as ISO text, with the clock moved on a little either side: every write of
    the history lands strictly between two ticks."""
    await asyncio.sleep(0.05)
    now = datetime.now(UTC).isoformat()
    await asyncio.sleep(0.05)
    return now


async def episode(api: Api, description: str, qty: str, columns: list[str]) -> dict[str, Any]:
    spec = {
        "description": description,
        "outcome": "imported",
        "success": True,
        "structure": columns,
        "mappings": {"Qty": qty},
    }
    result: dict[str, Any] = (await api.data(RECORD, {"i": spec}))["recordEpisode"]
    return result


async def prior(api: Api, **at: Any) -> tuple[str | None, list[str]]:
    """The winning value for Qty and the voters' ids, at the moment asked."""
    variables = {"q": QUERY, "s": compute_signature(COLUMNS), "a": None, "v": None, "h": False}
    found = (await api.data(PRIOR, variables | at))["priorKnowledge"]
    votes = {v["key"]: v["value"] for v in found["votes"]}
    return votes.get("Qty"), sorted(e["episode"]["id"] for e in found["episodes"])


async def test_prior_knowledge_counts_only_the_episodes_recorded_by_then(api: Api) -> None:
    t0 = await tick()
    first = await episode(api, "Load supplier price list", "amount", ["Part", "Qty"])
    assert first["recordedAt"] == first["createdAt"]  # happened when it was recorded
    t1 = await tick()
    # the same structure: its signature match outweighs the first episode's vote
    second = await episode(api, "Import monthly sales spreadsheet", "quantity", COLUMNS)
    t2 = await tick()

    assert await prior(api, a=t0) == (None, [])
    assert await prior(api, a=t1) == ("amount", [first["id"]])
    both = sorted([first["id"], second["id"]])
    assert await prior(api, a=t2) == ("quantity", both)
    assert await prior(api) == ("quantity", both)
    # valid time: a fresh episode happened when it was recorded
    assert await prior(api, v=t1) == ("amount", [first["id"]])
    assert await prior(api, a=t2, v=t0) == (None, [])
    # an episode is never retracted: history adds nothing
    assert await prior(api, a=t1, h=True) == ("amount", [first["id"]])
    similar = await api.data(SIMILAR, {"q": QUERY, "a": t1, "v": None})
    assert [r["episode"]["id"] for r in similar["similarEpisodes"]] == [first["id"]]

    # an imported episode keeps when it happened, and is recorded at the import
    task = {
        "importId": "old-task",
        "description": "Import the 2020 sales sheet",
        "createdAt": "2020-03-01T00:00:00+00:00",
        "episodes": [
            {
                "description": "Import the 2020 sales sheet",
                "outcome": "imported",
                "success": True,
                "signature": compute_signature(COLUMNS),
                "mappings": {"Qty": "units"},
                "createdAt": "2020-03-01T00:00:00+00:00",
                "recordedAt": "2020-03-02T00:00:00+00:00",
            }
        ],
    }
    (imported,) = (await api.data(IMPORT, {"i": task}))["importTask"]["task"]["episodeIds"]
    t3 = await tick()
    found = await api.data(PRIOR, {"q": QUERY, "s": None, "a": t3, "v": None})
    rows = {e["episode"]["id"]: e["episode"] for e in found["priorKnowledge"]["episodes"]}
    assert rows[imported]["createdAt"].startswith("2020-03-01")
    assert when(rows[imported]["recordedAt"]) > when(t2)  # recorded here, as an imported memory is
    # graphmem did not know of it at t2, though it happened long before
    assert imported not in (await prior(api, a=t2))[1]
    assert (await prior(api, v="2021-01-01T00:00:00Z"))[1] == [imported]


async def test_moments_on_prior_knowledge_are_checked_as_on_search(api: Api) -> None:
    await episode(api, "Import monthly sales spreadsheet", "quantity", COLUMNS)
    variables = {"q": QUERY, "s": None, "v": None}
    for bad in ("2020-01-01T00:00:00+23:00", "2020-01-01T00:00:00+18:00:30", "not a date"):
        body = await api.gql(PRIOR, variables | {"a": bad})
        assert body["errors"], bad
        assert "Traceback" not in str(body) and "neo4j" not in str(body).lower()
    # a time without a zone is UTC; one past year 9999 (after conversion) is the latest
    assert (await prior(api, a="2000-01-01T00:00:00"))[1] == []
    assert len((await prior(api, a="9999-12-31T23:59:59-18:00"))[1]) == 1
    assert (await prior(api, a="0001-01-01T00:00:00+18:00"))[1] == []


async def test_records_read_at_a_moment(api: Api) -> None:
    schema = {"type": "object", "properties": {"place": {"type": "string"}, "on": {}}}
    await api.data(REGISTER, {"s": schema})
    t0 = await tick()
    # the record's own date is its data: graphmem's record time is when it was stored
    lyon = (await api.data(ADD_RECORD, {"d": {"place": "Lyon", "on": "1999-05-01"}}))["addRecord"]
    assert lyon["recordedAt"] == lyon["createdAt"] and when(lyon["recordedAt"]) > when(t0)
    t1 = await tick()
    rome = (await api.data(ADD_RECORD, {"d": {"place": "Rome"}}))["addRecord"]

    async def places(at: str | None) -> list[str]:
        rows = (await api.data(RECORDS, {"a": at}))["records"]
        return [r["data"]["place"] for r in rows]

    assert await places(t0) == []
    assert await places(t1) == ["Lyon"]
    assert await places(None) == ["Rome", "Lyon"]
    rows = (await api.data(RECORDS, {"a": None}))["records"]
    assert {r["id"]: r["recordedAt"] for r in rows} == {
        lyon["id"]: lyon["recordedAt"],
        rome["id"]: rome["recordedAt"],
    }
    bad = await api.gql(RECORDS, {"a": "2020-01-01T00:00:00+23:00"})
    assert bad["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    # records take no valid time: the schema has no such argument
    body = await api.gql('{ records(schema: "visit", validAt: "2020-01-01T00:00:00Z") { id } }')
    assert body["errors"]


async def test_reflections_carry_their_record_time(api: Api) -> None:
    for qty in ("amount", "quantity"):
        await episode(api, "Import monthly sales spreadsheet", qty, COLUMNS)
    t0 = await tick()
    first = {r["id"]: r["recordedAt"] for r in (await api.data(REFLECT))["reflect"]}
    assert first and all(when(at) > when(t0) for at in first.values())
    # found again: updated in place, first found when it was
    again = {r["id"]: r["recordedAt"] for r in (await api.data(REFLECT))["reflect"]}
    assert again == first


async def test_the_client_carries_the_moment_to_episodes_and_records(api: Api) -> None:
    client = AsyncGraphmem("http://test", key=next(iter(api.keys.values())), http=api.client)
    t0 = datetime.now(UTC)
    await asyncio.sleep(0.05)
    recorded = await client.record_episode(
        "imported", True, description="Import weekly sales", mappings={"Qty": "amount"}
    )
    assert recorded.recorded_at is not None and recorded.recorded_at > t0
    found = await client.prior_knowledge("import weekly sales")
    assert [v.value for v in found.votes] == ["amount"]
    assert found.episodes[0].episode.recorded_at == recorded.recorded_at
    before = await client.prior_knowledge("import weekly sales", at=At(as_of=t0))
    assert before.votes == [] and before.episodes == []
    assert await client.similar_episodes("import weekly sales", at=At(valid_at=t0)) == []

    await api.data(REGISTER, {"s": {"type": "object"}})
    await api.data(ADD_RECORD, {"d": {"place": "Oslo"}})
    (oslo,) = await client.records("visit", where={"place": "Oslo"})
    assert oslo.recorded_at is not None and oslo.recorded_at > t0
    assert await client.records("visit", at=At(as_of=t0)) == []


async def test_migration_gives_older_episodes_and_records_their_record_time(
    service: Memory, stack: Stack
) -> None:
    tenant = new_tenant()
    assert service.episodes is not None and service.manager is not None
    await service.episodes.record_episode(tenant, outcome="done", success=True, description="x")
    await service.manager.register_schema(tenant, "note", {"type": "object"})
    await service.manager.add_record(tenant, "note", {"text": "y"})
    # as written before record time was kept
    for label in ("Episode", "Record"):
        await run_cypher(stack, f"MATCH (n:{label} {{tenant: $t}}) REMOVE n.recordedAt", t=tenant)
    await service.migrate()
    for label in ("Episode", "Record"):
        rows = await run_cypher(
            stack,
            f"MATCH (n:{label} {{tenant: $t}}) RETURN n.recordedAt = n.createdAt AS same",
            t=tenant,
        )
        assert [r["same"] for r in rows] == [True], label
