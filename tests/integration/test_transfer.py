"""Pipelines (ownership transfer, docs/concepts.md#primitive): owner + generation
handles, audited hand-overs."""

from __future__ import annotations

import asyncio

from tests.conftest import Api

CREATE = 'mutation { createTask(description: "import, enrich, publish", owner: "ingest") { id owner generation } }'  # noqa: E501
STEP = """mutation($t: ID!, $a: String!, $o: String, $g: Int) {
  addStep(taskId: $t, input: {action: $a}, owner: $o, generation: $g) { order owner generation } }"""  # noqa: E501
TRANSFER = """mutation($t: ID!, $from: String, $to: String!, $g: Int!) {
  transferTask(taskId: $t, fromOwner: $from, toOwner: $to, generation: $g, reason: "next stage") {
    owner generation } }"""
TASK = """query($t: ID!) { task(id: $t) { owner generation steps { action owner generation }
  transfers { fromOwner toOwner fromGeneration toGeneration reason at } } }"""


def forbidden(body: dict) -> str:
    error = body["errors"][0]
    assert error["extensions"]["code"] == "FORBIDDEN", body
    return str(error["message"])


async def test_old_owner_is_refused_and_the_audit_trail_lists_every_hand_over(api: Api) -> None:
    task = (await api.data(CREATE))["createTask"]
    assert (task["owner"], task["generation"]) == ("ingest", 1)
    t = task["id"]
    await api.data(STEP, {"t": t, "a": "read file", "o": "ingest", "g": 1})
    # no handle at all on an owned task
    assert "generation 1" in forbidden(await api.gql(STEP, {"t": t, "a": "sneak in"}))

    moved = await api.data(TRANSFER, {"t": t, "from": "ingest", "to": "enrich", "g": 1})
    assert moved["transferTask"] == {"owner": "enrich", "generation": 2}
    stale = await api.gql(STEP, {"t": t, "a": "late write", "o": "ingest", "g": 1})
    message = forbidden(stale)
    assert "'enrich' at generation 2" in message
    assert stale["errors"][0]["extensions"]["generation"] == 2
    # the old owner cannot hand it on again either
    forbidden(await api.gql(TRANSFER, {"t": t, "from": "ingest", "to": "x", "g": 1}))

    await api.data(STEP, {"t": t, "a": "extract entities", "o": "enrich", "g": 2})
    await api.data(TRANSFER, {"t": t, "from": "enrich", "to": "publish", "g": 2})
    await api.data(STEP, {"t": t, "a": "publish report", "o": "publish", "g": 3})

    found = (await api.data(TASK, {"t": t}))["task"]
    assert (found["owner"], found["generation"]) == ("publish", 3)
    assert [(s["action"], s["owner"], s["generation"]) for s in found["steps"]] == [
        ("read file", "ingest", 1),
        ("extract entities", "enrich", 2),
        ("publish report", "publish", 3),
    ]
    trail = [
        (x["fromOwner"], x["toOwner"], x["fromGeneration"], x["toGeneration"])
        for x in found["transfers"]
    ]
    assert trail == [("ingest", "enrich", 1, 2), ("enrich", "publish", 2, 3)]
    assert all(x["reason"] == "next stage" and x["at"] for x in found["transfers"])


async def test_concurrent_transfers_resolve_to_one_winner(api: Api) -> None:
    t = (await api.data(CREATE))["createTask"]["id"]
    bodies = await asyncio.gather(
        *[
            api.gql(TRANSFER, {"t": t, "from": "ingest", "to": f"worker-{n}", "g": 1})
            for n in range(6)
        ]
    )
    winners = [b["data"]["transferTask"] for b in bodies if b.get("data")]
    losers = [b for b in bodies if b.get("errors")]
    assert len(winners) == 1 and len(losers) == 5
    for body in losers:
        assert "generation 2" in forbidden(body)
    found = (await api.data(TASK, {"t": t}))["task"]
    assert found["owner"] == winners[0]["owner"] and found["generation"] == 2
    assert len(found["transfers"]) == 1


async def test_unknown_tasks_and_unowned_tasks(api: Api) -> None:
    body = await api.gql(TRANSFER, {"t": "task_none", "from": "a", "to": "b", "g": 1})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    free = await api.data('mutation { createTask(description: "scratch") { id owner } }')
    t = free["createTask"]["id"]
    assert free["createTask"]["owner"] is None
    await api.data(STEP, {"t": t, "a": "anyone may write"})  # no owner: no handle needed
    claimed = await api.data(TRANSFER, {"t": t, "to": "stage-1", "g": 1})
    assert claimed["transferTask"] == {"owner": "stage-1", "generation": 2}
    forbidden(await api.gql(STEP, {"t": t, "a": "now it is owned"}))
