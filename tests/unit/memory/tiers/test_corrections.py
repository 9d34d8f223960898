"""Corrections over the in-memory stores: a retraction marks (nothing is deleted), spills
a hot item first, bumps the scopes' versions, is refused whole for an unknown id or
another tenant's, and an unretract keeps the retraction as a past span."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem.domain.moments import Moment
from graphmem.errors import BadInput, NotFound
from tests.support.memory import OTHER_TENANT, TENANT, fake_memory


async def test_a_hot_item_is_spilled_then_marked() -> None:
    f = fake_memory()
    memory = await f.add("a wrong fact", user_id="u")
    done = await f.memory.corrections.retract(TENANT, [memory.id], "wrong")
    assert done.changed_ids == [memory.id] and done.item_ids == [memory.id]
    assert await f.hot_ids() == set()  # the graph is where the retraction lives
    node = f.graph.node(TENANT, memory.id)
    assert node is not None and node["retractedAt"] == done.at and node["retractReason"] == "wrong"
    assert f.versions is not None
    assert f.versions.bumps[-1][1] == {"t": {memory.id}, "s:s1": {memory.id}, "u:u": {memory.id}}
    again = await f.memory.corrections.retract(TENANT, [memory.id], "again")
    assert again.changed_ids == [] and node["retractReason"] == "wrong"


async def test_an_unknown_or_foreign_id_changes_nothing() -> None:
    f = fake_memory(rules={"write_through": True})
    mine = await f.add("tenant a's")
    await f.memory.spills.spill(TENANT, "s1", item_ids=[mine.id])
    with pytest.raises(NotFound):
        await f.memory.corrections.retract(TENANT, [mine.id, "mem_missing"], "x")
    with pytest.raises(NotFound):
        await f.memory.corrections.retract(OTHER_TENANT, [mine.id], "x")
    with pytest.raises(NotFound):
        await f.memory.corrections.unretract(OTHER_TENANT, [mine.id])
    node = f.graph.node(TENANT, mine.id)
    assert node is not None and node.get("retractedAt") is None


@pytest.mark.parametrize(
    ("ids", "reason"),
    [([], ""), (["bad id!"], ""), (["mem_x"] * 501, ""), (["mem_x"], "x" * 1001), (["m"], "\x00")],
)
async def test_hostile_corrections_are_bad_input(ids: list[str], reason: str) -> None:
    f = fake_memory()
    with pytest.raises(BadInput):
        await f.memory.corrections.retract(TENANT, ids, reason)


async def test_an_unretract_keeps_the_retraction_as_a_span() -> None:
    f = fake_memory()
    memory = await f.add("held, then not, then again")
    retracted = await f.memory.corrections.retract(TENANT, [memory.id], "")
    restored = await f.memory.corrections.unretract(TENANT, [memory.id])
    assert restored.changed_ids == [memory.id]
    node = f.graph.node(TENANT, memory.id)
    assert node is not None and node["retractedAt"] is None
    assert node["pastRetractedAt"] == [retracted.at] and node["restoredAt"] == [restored.at]
    (item,) = await f.graph.get(TENANT, [memory.id])
    inside = retracted.at + (restored.at - retracted.at) / 2
    after = restored.at + timedelta(seconds=1)
    rows = await f.graph.search.text_hits(TENANT, "content:(held)", 10, moment=Moment.of(inside))
    assert rows.ids == [] or inside == retracted.at
    rows = await f.graph.search.text_hits(TENANT, "content:(held)", 10, moment=Moment.of(after))
    assert rows.ids == [item.id]
