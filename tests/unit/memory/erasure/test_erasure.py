"""Erasure over the in-memory stores: each forget answers with a signed receipt whose
verification found nothing, leaves a tombstone that keeps a late writer (the write-behind
of an add it raced, a spill) from bringing the subject back, lets the user come back with
new memories, and keeps each tenant's receipts its own."""

from __future__ import annotations

from datetime import timedelta

from graphmem.memory.erasure.receipt import canonical, parse, verify
from graphmem.stores.models import EnrichmentJob
from tests.support.memory import OTHER_TENANT, TENANT, fake_memory


def key_of(f: object) -> bytes:
    return f.memory.erasure.key  # type: ignore[attr-defined, no-any-return]


async def test_forget_user_answers_with_a_verified_receipt_of_ids_and_counts() -> None:
    f = fake_memory()
    spilled = await f.add("ada's old secret", session_id="s1", user_id="ada")
    await f.memory.spills.spill(TENANT, "s1", item_ids=[spilled.id])
    await f.add("ada's new secret", session_id="s2", user_id="ada")
    bob = await f.add("bob's", session_id="s2", user_id="bob")
    done = await f.memory.erasure.forget_user(TENANT, "ada")
    assert done.counts["hotMemories"] == 1 and done.counts["graphMemories"] == 1
    receipt = done.receipt
    assert receipt["tenant"] == TENANT and receipt["subject"] == {"kind": "user", "userId": "ada"}
    assert receipt["removed"]["neo4j.nodes"]["Memory"] == 1
    assert receipt["removed"]["redis.hotItems"] == 1
    assert receipt["verification"]["clean"] is True
    assert set(receipt["verification"]["found"].values()) == {0}
    assert "secret" not in done.document  # ids and counts, never the content
    assert verify(parse(done.document.encode()), key_of(f)) is None
    assert await f.hot_ids("s2") == {bob.id}
    assert [n["id"] for n in f.graph.nodes(TENANT)] == []


async def test_a_write_behind_that_read_the_hot_tier_before_the_erasure_writes_nothing() -> None:
    f = fake_memory()
    item = await f.add("written behind late", user_id="ada")
    job = EnrichmentJob(entry="1-0", tenant=TENANT, session_id="s1", ids=[item.id])
    # The erasure's tombstone lands while the job waits; its hot item is still there
    # (as if added in the moment the erasure swept the hot tier).
    now = item.created_at + timedelta(seconds=1)
    await f.graph.erasure.tombstone(TENANT, "user", ["ada"], now, now + timedelta(days=1))
    admitted = await f.memory.write_behind.admit(job)
    assert admitted == [] and f.graph.nodes(TENANT) == []
    assert await f.hot_ids() == set()  # dropped from the hot tier too


async def test_a_spill_of_an_erased_subjects_item_drops_it_instead_of_writing_it() -> None:
    f = fake_memory()
    item = await f.add("spilled late", user_id="ada")
    later = item.created_at + timedelta(seconds=1)
    await f.graph.erasure.tombstone(TENANT, "user", ["ada"], later, later + timedelta(days=1))
    result = await f.memory.spills.spill(TENANT, "s1", item_ids=[item.id])
    assert result.spilled_ids == [] and f.graph.nodes(TENANT) == []
    assert await f.hot_ids() == set()


async def test_a_forgotten_user_may_come_back_with_new_memories() -> None:
    f = fake_memory(rules={"write_through": True})
    await f.add("before", user_id="ada")
    await f.memory.erasure.forget_user(TENANT, "ada")
    again = await f.add("after the erasure", user_id="ada")
    await f.memory.spills.spill(TENANT, "s1", item_ids=[again.id])
    assert [n["id"] for n in f.graph.nodes(TENANT)] == [again.id]


async def test_forget_session_and_memories_leave_the_rest() -> None:
    f = fake_memory(rules={"write_through": True})
    a = await f.add("one", session_id="s1")
    b = await f.add("two", session_id="s1")
    c = await f.add("three", session_id="s2")
    done = await f.memory.erasure.forget_items(TENANT, [a.id])
    assert done.receipt["subject"] == {"kind": "memories", "itemIds": [a.id]}
    assert done.receipt["verification"]["clean"] is True
    assert {n["id"] for n in f.graph.nodes(TENANT)} == {b.id, c.id}
    session = await f.memory.erasure.forget_session(TENANT, "s1")
    assert session.counts["hotMemories"] == 1 and session.counts["graphMemories"] == 1
    assert session.receipt["verification"]["clean"] is True
    assert {n["id"] for n in f.graph.nodes(TENANT)} == {c.id}
    assert await f.hot_ids("s2") == {c.id}


async def test_receipts_are_the_tenants_own_and_an_import_restores_them_as_signed() -> None:
    f = fake_memory()
    await f.add("x", user_id="ada")
    done = await f.memory.erasure.forget_user(TENANT, "ada")
    page, _ = await f.memory.erasure.receipts(TENANT, "ada")
    assert [canonical(r) for r in page] == [done.document.encode()]
    assert (await f.memory.erasure.receipts(OTHER_TENANT))[0] == []
    assert await f.memory.erasure.restore_receipt(TENANT, done.receipt) is False  # held
    other = fake_memory()
    assert await other.memory.erasure.restore_receipt(TENANT, done.document) is True
    restored, _ = await other.memory.erasure.receipts(TENANT)
    assert verify(restored[0], key_of(f)) is None  # not signed again
    try:
        await other.memory.erasure.restore_receipt(OTHER_TENANT, done.receipt)
    except Exception as exc:
        assert "another tenant" in str(exc)
    else:
        raise AssertionError("another tenant's receipt was restored")


async def test_forgetting_ids_tombstones_the_ones_found_and_no_made_up_one() -> None:
    f = fake_memory()
    hot = await f.add("in the hot tier", session_id="s1", user_id="ada")
    spilled = await f.add("in the graph", session_id="s1", user_id="ada")
    await f.memory.spills.spill(TENANT, "s1", item_ids=[spilled.id])
    made_up = [f"mem_{n:032x}" for n in range(3)]
    done = await f.memory.erasure.forget_items(TENANT, [hot.id, spilled.id, *made_up])
    assert done.counts["hotMemories"] == 1 and done.counts["graphMemories"] == 1
    assert done.receipt["subject"]["itemIds"] == [hot.id, spilled.id, *made_up]
    marked = await f.graph.erasure.tombstones(TENANT, "memory", [hot.id, spilled.id, *made_up])
    assert set(marked) == {hot.id, spilled.id}
    nothing = await f.memory.erasure.forget_items(TENANT, made_up)
    assert nothing.receipt["verification"]["clean"] is True
    assert await f.graph.erasure.tombstones(TENANT, "memory", made_up) == {}


async def test_forgetting_what_holds_nothing_is_answered_signed_but_never_logged() -> None:
    f = fake_memory()
    await f.add("ada's", session_id="s1", user_id="ada")
    logged = await f.memory.erasure.forget_user(TENANT, "ada")
    assert logged.logged
    for n in range(50):  # a tenant forgetting made-up names grows no log
        made_up = await f.memory.erasure.forget_items(TENANT, [f"mem_{n:032x}"])
        assert not made_up.logged and verify(made_up.receipt, key_of(f)) is None
        assert not (await f.memory.erasure.forget_user(TENANT, f"nobody-{n}")).logged
        assert not (await f.memory.erasure.forget_session(TENANT, f"none-{n}")).logged
    page, _ = await f.memory.erasure.receipts(TENANT, limit=100)
    assert [r["id"] for r in page] == [logged.receipt["id"]]


async def test_tasks_and_records_need_the_graph_that_holds_them() -> None:
    f = fake_memory()  # no KindErasure: the in-memory stores hold no tasks
    for call in (
        f.memory.erasure.forget_task(TENANT, "task_1"),
        f.memory.erasure.forget_records(TENANT, ["rec_1"]),
    ):
        try:
            await call
        except Exception as exc:
            assert getattr(exc, "code", None) == "UNAVAILABLE", exc
        else:
            raise AssertionError("answered without a store")
