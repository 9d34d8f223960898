"""What `graphmem import` reads, line by line: entries are read as the file is, and a bad
line is skipped with its number and reason while the rest go on."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from graphmem.transfer.sources import Record, Skipped, TaskEntry, entries


def line(**fields: Any) -> str:
    return json.dumps(fields)


def write(path: Path, *lines: str | bytes) -> Path:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path


def test_each_bad_line_is_skipped_with_its_number_and_reason(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mixed.jsonl",
        "\ufeff" + line(kind="memory", id="a", sessionId="s", content="first"),
        '{"kind": "memory", "id": "b", "sessionId": "s", "content": "cut short',
        "[1, 2]",
        line(kind="memory", id="c", sessionId="s"),
        line(kind="memory", id="d", sessionId="s", content="x", tier="LUKEWARM"),
        line(kind="memory", id="e", sessionId="s", content="x", metadata=[1]),
        line(kind="entity", id="ent", name="Ada"),
        line(kind="task", importId="t1", description="a task"),
        line(kind="gossip"),
        b'{"sessionId": "s", "content": "\xff"}',
        "",
        line(sessionId="s", content="last", occurredAt="2024-01-01T00:00:00+23:59"),
        '{"sessionId": "s", "content": "x", "n": ' + "9" * 5000 + "}",
    )
    found = list(entries(path))
    records = [e for e in found if isinstance(e, Record)]
    skipped = {e.where: e.reason for e in found if isinstance(e, Skipped)}
    tasks = [e for e in found if isinstance(e, TaskEntry)]
    assert [(r.where, r.content) for r in records] == [("line 1", "first"), ("line 12", "last")]
    assert records[1].occurred_at == "2024-01-01T00:00:00+23:59"  # the API decides on it
    assert [t.where for t in tasks] == ["line 8"]
    assert set(skipped) == {
        "line 2",
        "line 3",
        "line 4",
        "line 5",
        "line 6",
        "line 9",
        "line 10",
        "line 13",
    }
    assert skipped["line 2"].startswith("not JSON")
    assert skipped["line 3"] == "not a JSON object"
    assert skipped["line 4"] == "content is missing"
    assert "tier" in skipped["line 5"]
    assert skipped["line 6"] == "metadata must be an object"
    assert "gossip" in skipped["line 9"]
    assert skipped["line 10"] == "not UTF-8"
    assert "too long" in skipped["line 13"]


def test_a_json_array_is_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "chats.json"
    path.write_text(
        json.dumps(
            [
                {"messages": [{"role": "user", "content": "hi"}], "id": "c1"},
                {"messages": "not a list", "nothing": 1},
                {"messages": [7]},
            ]
        )
    )
    found = list(entries(path))
    assert [e.content for e in found if isinstance(e, Record)] == ["hi"]
    assert [e.where for e in found if isinstance(e, Skipped)] == ["item 2", "item 3"]


def test_a_broken_json_array_is_one_skip(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[{"messages": []}')
    (only,) = entries(path)
    assert isinstance(only, Skipped) and only.where == "the JSON array"


def test_entries_are_read_as_the_file_is_not_all_at_once(tmp_path: Path) -> None:
    """A pipe whose writer waits for the first entry to be read before it writes the
    rest: read whole, the file never ends and nothing is read in time."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    first_read = threading.Event()

    def writer() -> None:
        with fifo.open("w") as out:
            out.write(line(sessionId="s", content="one") + "\n")
            out.flush()
            first_read.wait(5)
            out.write(line(sessionId="s", content="two") + "\n")

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        stream = entries(fifo)
        first = next(stream)
        assert thread.is_alive(), "the whole file was read before the first entry"
        first_read.set()
        assert isinstance(first, Record) and first.content == "one"
        assert [e.content for e in stream if isinstance(e, Record)] == ["two"]
    finally:
        first_read.set()
        thread.join()
