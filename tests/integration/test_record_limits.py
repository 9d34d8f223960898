"""Structured records and noisy neighbours: a tenant's record schema cannot
make validation run on after its refusal or slow another tenant, and the keys of a
tenant's records do not become property keys of the whole Neo4j database."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

from tests.conftest import Api, Stack, run_cypher
from tests.support.records import HOSTILE, chain, nest, threads_validating

REGISTER = "mutation($n: String!, $s: JSON!) { registerRecordSchema(name: $n, schema: $s) }"
ADD_RECORD = "mutation($n: String!, $d: JSON!) { addRecord(schema: $n, data: $d) { id } }"
RECORDS = "query($n: String!, $w: JSON) { records(schema: $n, where: $w) { id data } }"


def refused(body: dict) -> str:
    assert body.get("errors"), body
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT", body
    return str(body["errors"][0]["message"])


async def test_a_schema_that_doubles_per_level_is_refused_at_registration(api: Api) -> None:
    message = refused(await api.gql(REGISTER, {"n": "hostile", "s": HOSTILE}))
    assert "anyOf" in message and "#/$defs/n" in message, message
    unbounded = {"properties": {"tags": {"type": "array", "uniqueItems": True}}}
    message = refused(await api.gql(REGISTER, {"n": "tags", "s": unbounded}))
    assert "uniqueItems" in message and "maxItems" in message, message


async def test_unique_items_over_thousands_of_objects_is_checked_in_linear_time(api: Api) -> None:
    schema = {"properties": {"xs": {"type": "array", "uniqueItems": True, "maxItems": 5000}}}
    assert (await api.data(REGISTER, {"n": "uniq", "s": schema}))["registerRecordSchema"]
    items = [{"k": i} for i in range(4000)]
    started = time.perf_counter()
    await api.data(ADD_RECORD, {"n": "uniq", "d": {"xs": items}})
    message = refused(await api.gql(ADD_RECORD, {"n": "uniq", "d": {"xs": [*items, {"k": 5}]}}))
    assert "non-unique" in message
    assert time.perf_counter() - started < 2.0  # jsonschema's pairwise check: 6 s each


async def test_a_check_past_its_budget_stops_and_other_tenants_go_on(api: Api) -> None:
    hostile, other = api.keys
    # passes the shape check (each definition recurses on one path), yet checking it
    # grows as depth^8: the step budget is what stops it
    await api.data(REGISTER, {"n": "chain", "s": chain(8)}, tenant=hostile)
    await api.data(REGISTER, {"n": "plain", "s": {"type": "object"}}, tenant=other)
    await api.data(ADD_RECORD, {"n": "plain", "d": {"x": 1}}, tenant=other)

    async def attack() -> str:
        body = await api.gql(ADD_RECORD, {"n": "chain", "d": nest(31)}, tenant=hostile)
        if body["errors"][0]["extensions"]["code"] == "RATE_LIMITED":
            return "RATE_LIMITED"  # the tenant's share of the server ran out: fine too
        return refused(body)

    async def read() -> float:
        started = time.perf_counter()
        rows = (await api.data(RECORDS, {"n": "plain", "w": {"x": 1}}, tenant=other))["records"]
        assert len(rows) == 1
        return time.perf_counter() - started

    *messages, waited = await asyncio.gather(*(attack() for _ in range(6)), read())
    assert any("steps" in m for m in messages), messages
    assert all("steps" in m or m == "RATE_LIMITED" for m in messages), messages
    assert threads_validating() == []  # before: six threads ran on for minutes
    assert waited < 5.0 and await read() < 5.0  # before: 36 s


async def test_a_hostile_schema_stored_before_the_checks_is_refused_when_used(
    api: Api, stack: Stack
) -> None:
    tenant = next(iter(api.keys))
    await run_cypher(
        stack,
        "CREATE (:RecordSchema {tenant: $tenant, name: 'old', schema: $schema})",
        tenant=tenant,
        schema=json.dumps(HOSTILE),
    )
    message = refused(await api.gql(ADD_RECORD, {"n": "old", "d": nest(31)}))
    assert "anyOf" in message and "register" in message, message
    assert threads_validating() == []


async def property_keys(stack: Stack) -> set[str]:
    rows = await run_cypher(stack, "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey")
    return {r["propertyKey"] for r in rows}


async def test_record_fields_do_not_become_property_keys_of_the_database(
    api: Api, stack: Stack
) -> None:
    await api.data(REGISTER, {"n": "wide", "s": {"type": "object"}})
    await api.data(ADD_RECORD, {"n": "wide", "d": {"warm": 1}})  # the fixed names exist now
    fields = {f"k{uuid.uuid4().hex[:8]}_{i}": f"v{i:012d}" for i in range(101)}
    before = await property_keys(stack)
    await api.data(ADD_RECORD, {"n": "wide", "d": fields})
    after = await property_keys(stack)
    assert not {k for k in after if any(f in k for f in fields)}, after - before
    assert len(after) - len(before) < 5  # before: 101 new keys, never reclaimed
    key = next(iter(fields))
    rows = (await api.data(RECORDS, {"n": "wide", "w": {key: fields[key]}}))["records"]
    assert [r["data"] for r in rows] == [fields]


async def test_where_compares_values_as_json_does(api: Api) -> None:
    await api.data(REGISTER, {"n": "kinds", "s": {"type": "object"}})
    data = {"n": 2, "f": 2.5, "flag": True, "s": "2", "nested": {"n": 2}}
    await api.data(ADD_RECORD, {"n": "kinds", "d": data})

    async def found(where: dict) -> bool:
        rows = (await api.data(RECORDS, {"n": "kinds", "w": where}))["records"]
        return [r["data"] for r in rows] == [data]

    assert await found({"n": 2.0}) and await found({"f": 2.5}) and await found({"s": "2"})
    assert await found({"flag": True}) and await found({"n": 2, "flag": True})
    assert not await found({"flag": 1}) and not await found({"n": "2"})
    assert not await found({"s": 2}) and not await found({"n": True})
    assert not await found({"n": 2, "s": "x"}) and not await found({"missing": 2})


async def test_records_stored_with_one_property_per_field_are_migrated(
    api: Api, stack: Stack
) -> None:
    tenant = next(iter(api.keys))
    await api.data(REGISTER, {"n": "legacy", "s": {"type": "object"}})
    data = {"code": "zephyr", "seats": 2, "ok": True, "deep": {"x": 1}}
    await run_cypher(
        stack,
        "MATCH (s:RecordSchema {tenant: $tenant, name: 'legacy'}) "
        "CREATE (r:Record {tenant: $tenant, id: $id, schema: 'legacy', data: $data, "
        "createdAt: datetime(), f_code: 'zephyr', f_seats: 2, f_ok: true}) "
        "CREATE (r)-[:CONFORMS_TO]->(s)",
        tenant=tenant,
        id=f"rec_{uuid.uuid4().hex}",
        data=json.dumps(data),
    )
    assert await api.app.state.service.graph.backfill_record_fields() >= 1
    rows = await run_cypher(
        stack, "MATCH (r:Record {tenant: $tenant}) RETURN keys(r) AS keys", tenant=tenant
    )
    assert rows and not any(k.startswith("f_") for r in rows for k in r["keys"]), rows
    for where in ({"code": "zephyr"}, {"seats": 2, "ok": True}):
        found = (await api.data(RECORDS, {"n": "legacy", "w": where}))["records"]
        assert [r["data"] for r in found] == [data]
