"""forgetTask, forgetRecords and the tasks forgetUser takes, against the real stack: what
they erase is gone from every query and from the graph and Redis underneath, their
receipts verify (``graphmem receipt verify``) with a clean second look, late writers
(a step, an episode, working memory, a reflect that read before, an import of the old
export) bring nothing back, and receipts of erasures that removed nothing are answered
but not logged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphmem.memory.erasure.receipt import verify
from tests.conftest import Api, Stack, receipt_verify, run_cypher

RECEIPT = "receipt { id subject removed verification clean document }"
TASK_COUNTS = f"tasks steps transfers episodes reflections workingMemory {RECEIPT}"
FORGET_TASK = f"""mutation($t: ID!, $o: String, $g: Int) {{
  forgetTask(taskId: $t, owner: $o, generation: $g) {{ {TASK_COUNTS} }} }}"""
EPISODE = """mutation($i: EpisodeInput!) { recordEpisode(input: $i) { id taskId } }"""
STEP = """mutation($t: ID!, $a: String!, $o: String, $g: Int) {
  addStep(taskId: $t, input: {action: $a, status: FAILED}, owner: $o, generation: $g) { id } }"""
SET_WM = (
    "mutation($t: ID!, $k: String!, $v: JSON) { setWorkingMemory(taskId: $t, key: $k, value: $v) }"
)
REFLECT = "mutation { reflect { id evidence } }"


def codes(body: dict[str, Any]) -> list[str]:
    return [e["extensions"]["code"] for e in body.get("errors", [])]


async def left_in_graph(stack: Stack, tenant: str, task_id: str, ids: list[str]) -> int:
    rows = await run_cypher(
        stack,
        "MATCH (n {tenant: $t}) WHERE n.id IN $ids OR n.taskId = $task "
        "OR n.importId = $task RETURN count(n) AS n",
        t=tenant,
        ids=ids,
        task=task_id,
    )
    return int(rows[0]["n"])


async def test_forget_task_erases_it_everywhere_and_nothing_brings_it_back(
    api: Api, stack: Stack, tmp_path: Path
) -> None:
    tenant = next(iter(api.keys))
    made = await api.data(
        'mutation { createTask(description: "migrate the billing tables", owner: "pipe-1") '
        "{ id generation } }"
    )
    task = made["createTask"]["id"]
    await api.data(STEP, {"t": task, "a": "copy invoices", "o": "pipe-1", "g": 1})
    await api.data(
        'mutation($t: ID!) { transferTask(taskId: $t, fromOwner: "pipe-1", toOwner: "pipe-2", '
        'generation: 1, reason: "shift") { generation } }',
        {"t": task},
    )
    await api.data(STEP, {"t": task, "a": "copy invoices again", "o": "pipe-2", "g": 2})
    episode = await api.data(
        EPISODE,
        {
            "i": {
                "taskId": task,
                "outcome": "billing migrated on the second try",
                "success": True,
                "signature": "sig-billing",
                "lessons": ["lock the invoices table first"],
            }
        },
    )
    await api.data(SET_WM, {"t": task, "k": "plan", "v": {"table": "invoices"}})
    other = await api.data(
        EPISODE,
        {
            "i": {
                "description": "migrate the billing tables elsewhere",
                "outcome": "failed",
                "success": False,
                "signature": "sig-billing",
                "steps": [{"action": "copy invoices", "status": "FAILED"}],
            }
        },
    )
    kept_task = other["recordEpisode"]["taskId"]
    reflections = (await api.data(REFLECT))["reflect"]
    episode_id = episode["recordEpisode"]["id"]
    drawn = [r for r in reflections if episode_id in r["evidence"]]
    assert drawn, reflections
    before = await api.data(
        "query($t: ID!) { task(id: $t) { steps { id } episodeIds transfers { toOwner } } }",
        {"t": task},
    )
    step_ids = [s["id"] for s in before["task"]["steps"]]
    assert len(step_ids) == 2 and before["task"]["episodeIds"] == [episode_id]
    assert await left_in_graph(stack, tenant, task, [task, *step_ids, episode_id]) == 5

    # The old handle may not: FORBIDDEN, and nothing changed.
    stale = await api.gql(FORGET_TASK, {"t": task, "o": "pipe-1", "g": 1})
    assert codes(stale) == ["FORBIDDEN"], stale
    unknown = await api.gql(FORGET_TASK, {"t": "task_made_up"})
    assert codes(unknown) == ["NOT_FOUND"], unknown
    assert await left_in_graph(stack, tenant, task, [task, *step_ids, episode_id]) == 5
    tombstones = await run_cypher(
        stack, "MATCH (m:Tombstone {tenant: $t, kind: 'task'}) RETURN m.subject AS s", t=tenant
    )
    assert tombstones == []

    done = (await api.data(FORGET_TASK, {"t": task, "o": "pipe-2", "g": 2}))["forgetTask"]
    assert (done["tasks"], done["steps"], done["transfers"], done["episodes"]) == (1, 2, 1, 1)
    assert done["reflections"] == len(drawn) and done["workingMemory"] == 1
    receipt = done["receipt"]
    assert receipt["subject"] == {"kind": "task", "taskId": task}
    assert receipt["clean"] is True
    found = receipt["verification"]["found"]
    assert set(found) >= {"neo4j.Task", "neo4j.Step", "neo4j.Episode", "redis.workingMemory"}
    assert not any(found.values()), found
    assert receipt["removed"]["neo4j.vectorIndexEntries"] == 2  # the task's and the episode's
    assert receipt["removed"]["neo4j.nodes"]["Step"] == 2

    # Gone from every query and from the graph underneath.
    gone = await api.gql("query($t: ID!) { task(id: $t) { id } }", {"t": task})
    assert codes(gone) == ["NOT_FOUND"]
    similar = await api.data(
        'query { similarEpisodes(query: "billing migrated", limit: 50) { episode { id } } }'
    )
    assert episode_id not in json.dumps(similar)
    after = await api.data("query { reflections { id evidence } }")
    assert episode_id not in json.dumps(after)
    assert {r["id"] for r in drawn}.isdisjoint({r["id"] for r in after["reflections"]})
    wm = await api.data("query($t: ID!) { workingMemory(taskId: $t) }", {"t": task})
    assert wm["workingMemory"] == {}
    assert await left_in_graph(stack, tenant, task, [task, *step_ids, episode_id]) == 0
    assert (await api.data("query($t: ID!) { task(id: $t) { id } }", {"t": kept_task}))["task"]

    # The receipt verifies, as signed, with graphmem receipt verify; and it is logged.
    saved = tmp_path / "task-receipt.json"
    saved.write_text(receipt["document"], encoding="utf-8")
    key = api.app.state.service.erasure.key
    assert verify(json.loads(receipt["document"]), key) is None
    code, out = receipt_verify(stack, saved, key.decode("utf-8"))
    assert code == 0 and out.startswith(f"valid: receipt {receipt['id']}"), out
    log = await api.data("query { erasureReceipts(limit: 100) { items { id } } }")
    assert receipt["id"] in [r["id"] for r in log["erasureReceipts"]["items"]]

    # Late writers bring nothing back.
    late_step = await api.gql(STEP, {"t": task, "a": "one more", "o": "pipe-2", "g": 2})
    assert codes(late_step) == ["NOT_FOUND"], late_step
    late_episode = await api.gql(
        EPISODE, {"i": {"taskId": task, "outcome": "late", "success": True}}
    )
    assert codes(late_episode) == ["NOT_FOUND"], late_episode
    late_pad = await api.gql(SET_WM, {"t": task, "k": "plan", "v": 1})
    assert codes(late_pad) == ["NOT_FOUND"], late_pad
    wm = await api.data("query($t: ID!) { workingMemory(taskId: $t) }", {"t": task})
    assert wm["workingMemory"] == {}
    imported = await api.gql(
        "mutation($i: TaskImportInput!) { importTask(input: $i) { created task { id } } }",
        {
            "i": {
                "importId": task,
                "description": "migrate the billing tables",
                "owner": "pipe-2",
                "steps": [{"action": "copy invoices", "order": 0}],
                "episodes": [{"outcome": "billing migrated", "success": True}],
            }
        },
    )
    assert codes(imported) == ["BAD_INPUT"], imported
    # A reflect that read the episode before the erasure writes nothing drawn from it.
    service = api.app.state.service
    late = await service.episodes.store.upsert_reflection(
        tenant,
        {
            "key": "late-reflection-key",
            "id": "refl_late",
            "kind": "summary",
            "pattern": "copy invoices again",
            "support": 1,
            "confidence": 1.0,
            "signature": "sig-billing",
            "details": "{}",
            "evidence": [episode_id],
            "now": receipt_now(receipt),
        },
    )
    assert late is None
    assert await left_in_graph(stack, tenant, task, [task, *step_ids, episode_id]) == 0
    rows = await run_cypher(
        stack,
        "RETURN COUNT { (:Task {tenant: $t, description: 'migrate the billing tables'}) } "
        "AS tasks, COUNT { (:Reflection {tenant: $t, key: 'late-reflection-key'}) } AS late",
        t=tenant,
    )
    assert rows == [{"tasks": 0, "late": 0}]


def receipt_now(receipt: dict[str, Any]) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(json.loads(receipt["document"])["completedAt"])


async def test_forget_records_erases_found_ids_only_and_logs_what_removed_something(
    api: Api, stack: Stack
) -> None:
    tenant = next(iter(api.keys))
    schema = {"type": "object", "properties": {"title": {"type": "string"}}}
    await api.data(
        'mutation($s: JSON!) { registerRecordSchema(name: "notes", schema: $s) }', {"s": schema}
    )
    add = 'mutation($d: JSON!) { addRecord(schema: "notes", data: $d) { id } }'
    gone = (await api.data(add, {"d": {"title": "erase me"}}))["addRecord"]["id"]
    kept = (await api.data(add, {"d": {"title": "keep me"}}))["addRecord"]["id"]
    forget = f"mutation($i: [ID!]!) {{ forgetRecords(ids: $i) {{ records {RECEIPT} }} }}"

    done = (await api.data(forget, {"i": [gone, "rec_made_up"]}))["forgetRecords"]
    assert done["records"] == 1 and done["receipt"]["clean"] is True
    assert done["receipt"]["subject"] == {"kind": "records", "recordIds": [gone, "rec_made_up"]}
    assert done["receipt"]["removed"]["neo4j.nodes"] == {"Record": 1}
    assert done["receipt"]["verification"]["found"]["neo4j.Record"] == 0
    assert (
        verify(json.loads(done["receipt"]["document"]), api.app.state.service.erasure.key) is None
    )
    rows = await api.data('query { records(schema: "notes", limit: 10) { id } }')
    assert [r["id"] for r in rows["records"]] == [kept]
    marks = await run_cypher(
        stack, "MATCH (m:Tombstone {tenant: $t, kind: 'record'}) RETURN m.subject AS s", t=tenant
    )
    assert [m["s"] for m in marks] == [gone]

    # Ids that hold nothing: answered and signed, no tombstone, not logged.
    none = (await api.data(forget, {"i": ["rec_never_was"]}))["forgetRecords"]
    assert none["records"] == 0 and none["receipt"]["clean"] is True
    log = await api.data("query { erasureReceipts(limit: 100) { items { id } } }")
    logged = [r["id"] for r in log["erasureReceipts"]["items"]]
    assert done["receipt"]["id"] in logged and none["receipt"]["id"] not in logged
    marks = await run_cypher(
        stack, "MATCH (m:Tombstone {tenant: $t, kind: 'record'}) RETURN m.subject AS s", t=tenant
    )
    assert [m["s"] for m in marks] == [gone]

    for bad in ([], ["not valid!"], [f"rec_{n}" for n in range(501)]):
        refused = await api.gql(forget, {"i": bad})
        assert codes(refused) == ["BAD_INPUT"], refused
    rows = await api.data('query { records(schema: "notes", limit: 10) { id } }')
    assert [r["id"] for r in rows["records"]] == [kept]


async def test_forget_user_erases_the_tasks_they_hold_and_no_other(api: Api, stack: Stack) -> None:
    tenant = next(iter(api.keys))
    create = 'mutation($o: String) { createTask(description: "plan the trip", owner: $o) { id } }'
    theirs = (await api.data(create, {"o": "ulla"}))["createTask"]["id"]
    agents = (await api.data(create, {"o": "agent-7"}))["createTask"]["id"]
    await api.data(STEP, {"t": theirs, "a": "book", "o": "ulla", "g": 1})
    await api.data(EPISODE, {"i": {"taskId": theirs, "outcome": "booked", "success": True}})
    await api.data(SET_WM, {"t": theirs, "k": "k", "v": "v"})
    await api.data(
        'mutation { addMemory(input: {sessionId: "ulla-s", userId: "ulla", content: "hi"}) { id } }'
    )

    done = await api.data(
        'mutation { forgetUser(userId: "ulla") { hotMemories tasks receipt { removed '
        "verification clean document } } }"
    )
    user = done["forgetUser"]
    assert user["hotMemories"] == 1 and user["tasks"] == 1 and user["receipt"]["clean"]
    tasks = user["receipt"]["removed"]["tasks"]
    assert tasks["neo4j.nodes"]["Task"] == 1 and tasks["neo4j.nodes"]["Step"] == 1
    assert tasks["neo4j.nodes"]["Episode"] == 1 and tasks["redis.workingMemory"] == 1
    found = user["receipt"]["verification"]["found"]
    assert found["tasks.neo4j.Task"] == 0 and found["tasks.redis.workingMemory"] == 0
    assert (
        verify(json.loads(user["receipt"]["document"]), api.app.state.service.erasure.key) is None
    )
    assert codes(await api.gql("query($t: ID!) { task(id: $t) { id } }", {"t": theirs})) == [
        "NOT_FOUND"
    ]
    assert (await api.data("query($t: ID!) { task(id: $t) { id } }", {"t": agents}))["task"]
    assert await left_in_graph(stack, tenant, theirs, [theirs]) == 0
    # An old export of the user's task is not imported again (their tombstone).
    imported = await api.gql(
        "mutation($i: TaskImportInput!) { importTask(input: $i) { created } }",
        {
            "i": {
                "importId": "task_from_elsewhere",
                "description": "plan the trip",
                "owner": "ulla",
                "createdAt": "2020-01-01T00:00:00Z",
            }
        },
    )
    assert codes(imported) == ["BAD_INPUT"], imported
