"""Cypher rows parse into the typed models: driver times, merged entities, episodes'
JSON properties, items parsed only when read, and rows of lists without the memories a
concurrent erasure deleted while they were read."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import neo4j.time

from graphmem.domain.models import MemoryItem, to_datetime
from graphmem.stores.neo4j import records, records_kinds

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


NEO4J_WHEN = neo4j.time.DateTime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_one_datetime_conversion_for_driver_values_datetimes_and_text() -> None:
    assert to_datetime(NEO4J_WHEN) == WHEN
    assert to_datetime(WHEN) is WHEN
    assert to_datetime(WHEN.isoformat()) == WHEN
    assert records.when(None) is None
    assert records.native_row({"n": 3, "at": NEO4J_WHEN}) == {"n": 3, "at": WHEN}


def test_an_entity_row_flattens_its_merged_members() -> None:
    entity = {"key": "PLACE|paris", "name": "Paris", "type": "PLACE", "firstSeen": NEO4J_WHEN}
    mention = {"memoryId": "m1", "content": "in Paris", "surface": "Paris", "via": None}
    relation: dict[str, Any] = {"type": "LOCATED_IN", "direction": "out", "other": "PLACE|france"}
    relation |= {"otherName": "France", "validFrom": NEO4J_WHEN, "sources": ["m1"]}
    detail = records_kinds.entity_detail(
        {
            "entity": entity,
            "mentions": [[mention], [mention | {"memoryId": "m2"}]],
            "outgoing": [[relation], []],
            "incoming": [[], []],
            "cooccurring": [[{"other": "PLACE|france", "weight": None}]],
        }
    )
    assert detail.entity.first_seen == WHEN and detail.entity.mention_count == 0
    assert [m.memory_id for m in detail.mentions] == ["m1", "m2"]
    assert detail.mentions[0].via == "exact"
    assert detail.outgoing[0].valid_from == WHEN and detail.outgoing[0].valid_until is None
    assert detail.cooccurring[0].weight == 0


def test_episode_json_properties_are_decoded_and_steps_ordered() -> None:
    episode = {"id": "ep1", "taskId": "t1", "outcome": "ok", "success": True}
    episode |= {"metrics": '{"rows": 3}', "mappings": None, "lessons": None}
    steps = [
        {"id": "s2", "action": "b", "status": "failed", "order": 1},
        {"id": "s1", "action": "a", "status": "succeeded", "order": 0},
    ]
    parsed = records_kinds.episode_steps({"episode": episode, "steps": steps})
    assert parsed.episode.metrics == {"rows": 3} and parsed.episode.mappings == {}
    assert parsed.episode.lessons == []
    assert [s.id for s in parsed.steps] == ["s1", "s2"]


def test_items_read_beside_neighbours_are_parsed_when_asked_for_and_bad_rows_read_as_absent() -> (
    None
):
    row = {
        "id": "m1",
        "sessionId": "s",
        "content": "hello",
        "type": "fact",
        "tier": "warm",
        "lastAccessedAt": "2026-01-02T03:04:05Z",
        "createdAt": "2026-01-02T03:04:05Z",
    }
    calls: list[str] = []

    def parse(r: records.Row) -> MemoryItem:
        calls.append(r["id"])
        return records.memory_item("acme", r)

    items = records.ParsedOnRead([row, {**row, "id": "bad", "tier": "lukewarm"}], parse)
    assert calls == []  # nothing parsed until asked
    assert len(items) == 2 and "bad" in items and "other" not in items
    first = items["m1"]
    assert items.get("m1") is first and calls == ["m1"]  # parsed once
    assert first.content == "hello" and first.tenant == "acme"
    assert items.get("bad") is None  # logged and skipped, as `parsed` skips it
    assert items.get("other") is None


def _meta(ident: str, seq: int) -> str:
    return "\t".join([ident, "s1", "ada", str(seq), "MESSAGE", "WARM", "0", "Ada"])


def test_a_memory_deleted_while_its_row_was_read_is_left_out_of_every_column() -> None:
    row = {
        "n": 3,
        "meta": [_meta("m1", 1), None, _meta("m3", 3)],
        "vectors": [b"\x00" * 8, None, b"\x01" * 8],
        "sentences": [None, None, None],
        "terms": [b"\x02", None, b"\x03"],
        "scores": [0.9, 0.5, 0.1],
    }
    rows = records.memory_rows(row)
    assert rows.ids == ["m1", "m3"] and rows.seqs == [1, 3]
    assert rows.vectors == [b"\x00" * 8, b"\x01" * 8]
    assert rows.terms == [b"\x02", b"\x03"] and rows.scores == [0.9, 0.1]
    assert records.memory_rows({**row, "meta": [_meta("m1", 1)] * 3}).ids == ["m1"] * 3
