"""Erasure through the client and across an export and an import, on a real
`graphmem serve`: the client's receipt, saved, verifies with `graphmem receipt verify`
(one changed byte does not); an export taken before a forgetUser and imported after it,
once the tombstones are gone, brings nothing of the user back; an export taken after it
carries the receipts, which an import into an empty tenant restores as signed."""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem.client import AsyncGraphmem, At, Graphmem, item_put, memory
from graphmem.transfer.exporter import export_user
from graphmem.transfer.importer import import_file
from tests.conftest import Stack, new_tenant, receipt_verify, run_cypher, serving

KEY = f"erasure-transfer-{uuid.uuid4().hex[:8]}"
RECEIPT_KEY = "a-receipt-key-for-these-tests-only-0001"
TENANT = new_tenant()


@pytest.fixture(scope="module")
def url(stack: Stack) -> Iterator[str]:
    with serving(stack, {KEY: TENANT}, GRAPHMEM_RECEIPT_KEY=RECEIPT_KEY) as found:
        yield found


def test_a_receipt_from_the_client_saved_as_json_verifies_and_a_changed_byte_does_not(
    stack: Stack, url: str, tmp_path: Path
) -> None:
    with Graphmem(url, KEY) as gm:
        kept = gm.add("c-s1", "a note of carol's", user_id="carol")
        gone = gm.add("c-s1", "another of carol's", user_id="carol")
        done = gm.forget_memories([gone.id])
        assert done.hot_memories == 1 and done.receipt.clean
        assert done.receipt.subject == {"kind": "memories", "itemIds": [gone.id]}
        session = gm.forget_session("c-s1")
        assert session.hot_memories == 1 and session.receipt.subject["sessionId"] == "c-s1"
        asyncio.run(items(url, "put"))
        user = gm.forget_user("carol")
        assert user.receipt.subject == {"kind": "user", "userId": "carol"}
        # Their LangGraph store items ("users", userId, ...) went too; another user's stay.
        assert user.receipt.removed["neo4j.nodes"]["StoreItem"] == 1
        assert user.receipt.verification["found"]["neo4j.StoreItem"] == 0
        assert asyncio.run(items(url, "get")) == [False, True]
        page = gm.erasure_receipts(user_id="carol")
        assert [r.id for r in page.items] == [user.receipt.id]
    assert kept.id not in user.receipt.document
    saved = user.receipt.save(tmp_path / "receipt.json")
    code, out = receipt_verify(stack, saved, RECEIPT_KEY)
    assert code == 0 and out.startswith(f"valid: receipt {user.receipt.id}"), out
    data = bytearray(saved.read_bytes())
    at = data.index(b'hotItems":') + len(b'hotItems":')
    data[at] = ord("7") if data[at] != ord("7") else ord("6")
    saved.write_bytes(bytes(data))
    code, out = receipt_verify(stack, saved, RECEIPT_KEY)
    assert code == 1 and out.startswith("invalid"), out


def test_an_old_export_brings_nothing_erased_back_and_a_new_one_carries_the_receipts(
    stack: Stack, url: str, tmp_path: Path
) -> None:
    with Graphmem(url, KEY) as gm:
        gm.add_many(
            [memory("d-s1", f"dora's note {n}", user_id="dora") for n in range(5)]
            + [memory("d-s1", "ed's note", user_id="ed")]
        )
        gm.spill("d-s1", count=3, tier="COLD")
        before = io.StringIO()
        assert export_user(gm, "dora", before).memories == 5
        forgotten = gm.forget_user("dora")
        assert forgotten.receipt.clean and forgotten.tasks == 0
        after = io.StringIO()
        exported = export_user(gm, "dora", after)
        assert exported.memories == 0 and exported.receipts >= 1
    # The tombstones have expired (GRAPHMEM_TOMBSTONE_DAYS later): only receipts remain.
    rows = await_cypher(stack, "MATCH (x:Tombstone {tenant: $t}) DELETE x RETURN count(*) AS n")
    assert rows[0]["n"] >= 1
    old = tmp_path / "before.jsonl"
    old.write_text(before.getvalue(), encoding="utf-8")
    with Graphmem(url, KEY) as gm:
        report = import_file(gm, old, progress=False)
        assert report.erased == 5 and report.added == 0
        assert gm.memories(user_id="dora").items == []
        assert [m.content for m in gm.memories(user_id="ed").items] == ["ed's note"]
    # An empty tenant (a new install, the same tenant): the receipts come back as signed.
    for label in ("Memory", "Session", "User", "Entity", "ErasureReceipt", "Tombstone"):
        await_cypher(stack, f"MATCH (n:{label} {{tenant: $t}}) DETACH DELETE n RETURN 1")
    new = tmp_path / "after.jsonl"
    new.write_text(after.getvalue(), encoding="utf-8")
    with Graphmem(url, KEY) as gm:
        assert gm.erasure_receipts().items == []
        report = import_file(gm, new, progress=False)
        assert report.receipts_restored == exported.receipts and report.skipped == 0
        restored = gm.erasure_receipts(user_id="dora").items
        assert [r.document for r in restored] == [forgotten.receipt.document]
    code, out = receipt_verify(stack, restored[0].save(tmp_path / "restored.json"), RECEIPT_KEY)
    assert code == 0, out
    # ... and with them, the old export still brings nothing of dora's back.
    with Graphmem(url, KEY) as gm:
        assert import_file(gm, old, progress=False).erased == 5
        assert gm.memories(user_id="dora").items == []


def test_a_forgotten_task_verifies_and_an_old_export_of_it_is_not_imported_again(
    stack: Stack, url: str, tmp_path: Path
) -> None:
    with Graphmem(url, KEY) as gm:
        task = gm.create_task("erin's migration plan", owner="erin")
        gm.add_step(task.id, "copy the tables", owner="erin", generation=1)
        before = io.StringIO()
        assert export_user(gm, "erin", before).tasks == 1
        done = gm.forget_task(task.id, owner="erin", generation=1)
        assert (done.tasks, done.steps) == (1, 1) and done.receipt.clean
        assert done.receipt.subject == {"kind": "task", "taskId": task.id}
        assert gm.owned_tasks("erin").items == []
        nothing = gm.forget_records(["rec_never_was"])
        assert nothing.records == 0 and nothing.receipt.clean
        assert nothing.receipt.id not in [r.id for r in gm.erasure_receipts(limit=100).items]
    code, out = receipt_verify(stack, done.receipt.save(tmp_path / "task.json"), RECEIPT_KEY)
    assert code == 0 and out.startswith(f"valid: receipt {done.receipt.id}"), out
    # Long after (the tombstones expired), the receipt alone keeps the old export out.
    await_cypher(stack, "MATCH (x:Tombstone {tenant: $t}) DETACH DELETE x RETURN 1")
    old = tmp_path / "erin.jsonl"
    old.write_text(before.getvalue(), encoding="utf-8")
    with Graphmem(url, KEY) as gm:
        report = import_file(gm, old, progress=False)
        assert report.erased == 1 and report.tasks_added == 0, report
        assert gm.owned_tasks("erin").items == []


async def items(url: str, op: str) -> list[bool]:
    keys = [(["users", "carol", "prefs"], "tone"), (["users", "zed"], "tone")]
    async with AsyncGraphmem(url, KEY) as gm:
        if op == "put":
            await gm.put_items([item_put(ns, key, {"tone": "terse"}) for ns, key in keys])
            return []
        return [found is not None for found in await gm.get_items(keys)]


def await_cypher(stack: Stack, query: str) -> list[dict[str, Any]]:
    return asyncio.run(run_cypher(stack, query, t=TENANT))


def test_a_retracted_memory_is_exported_with_its_reason_and_retracted_again_on_import(
    url: str, tmp_path: Path
) -> None:
    with Graphmem(url, KEY) as gm:
        held, wrong = gm.add_many(
            [
                memory("f-s1", "Fay lives in Lyon", user_id="fay"),
                memory("f-s1", "Fay lives in Oslo", user_id="fay"),
            ]
        )
        gm.spill("f-s1", item_ids=[held.id])
        assert gm.retract([wrong.id], reason="a mistake") == [wrong.id]
        out = io.StringIO()
        assert export_user(gm, "fay", out).memories == 2
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        exported = {d["content"]: d for d in lines if d["kind"] == "memory"}
        assert exported["Fay lives in Oslo"]["retractReason"] == "a mistake"
        assert "retractedAt" not in exported["Fay lives in Lyon"]
        assert exported["Fay lives in Lyon"]["recordedAt"]
        # into another user (the same file with the user renamed): the import retracts the
        # wrong one again, and a rerun neither adds nor retracts anything
        moved = tmp_path / "fay.jsonl"
        moved.write_text(
            "".join(
                json.dumps(
                    {**d, "userId": "fay2", "sessionId": "f-s2"} if d["kind"] == "memory" else d
                )
                + "\n"
                for d in lines
            ),
            encoding="utf-8",
        )
        first = import_file(gm, moved, progress=False)
        assert (first.added, first.retracted) == (2, 1)
        current = gm.memories(user_id="fay2").items
        assert [m.content for m in current] == ["Fay lives in Lyon"]
        history = gm.memories(user_id="fay2", at=At(include_history=True)).items
        retracted = [m for m in history if m.retracted_at is not None]
        assert [(m.content, m.retract_reason) for m in retracted] == [
            ("Fay lives in Oslo", "a mistake")
        ]
        again = import_file(gm, moved, progress=False)
        assert (again.added, again.duplicates, again.retracted) == (0, 2, 0)
