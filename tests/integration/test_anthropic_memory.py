"""Claude's memory tool over graphmem, driven as the SDK's tool runner drives it (its
input parsing, dispatch and error results; no model call) against a real `graphmem
serve`: the six commands, directories, refusals that change nothing, a failed edit that
leaves the file intact, files found by recall, tenant and session scope; sync and async."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from anthropic.lib.tools._tool_dispatch import run_runnable_tool, tool_error_content

from graphmem.client import Graphmem, memory
from graphmem.integrations.anthropic import AsyncGraphmemMemoryTool, GraphmemMemoryTool
from tests.conftest import Stack, serving

KEYS = [f"am-key-{n}-{uuid.uuid4().hex[:8]}" for n in range(2)]


@pytest.fixture(scope="module")
def url(stack: Stack) -> Iterator[str]:
    with serving(stack, {k: f"t-am{n}-{uuid.uuid4().hex[:8]}" for n, k in enumerate(KEYS)}) as u:
        yield u


async def run(tool: Any, **command: Any) -> tuple[str, bool]:
    """What the tool runner puts in the tool_result block: (content, is_error)."""
    try:
        return str(await run_runnable_tool(tool, command)), False
    except Exception as exc:  # the runner's own catch: every error becomes a result
        return str(tool_error_content(exc)), True


async def ok(tool: Any, **command: Any) -> str:
    content, failed = await run(tool, **command)
    assert not failed, content
    return content


async def refused(tool: Any, **command: Any) -> str:
    content, failed = await run(tool, **command)
    assert failed, content
    return content


def session() -> str:
    return f"am-{uuid.uuid4().hex[:10]}"


async def listing(tool: Any) -> str:
    return await ok(tool, command="view", path="/memories")


async def test_create_view_and_directories(url: str) -> None:
    with GraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        assert await ok(tool, command="create", path="/memories/notes.md", file_text="a\nb\nc") == (
            "File created successfully at: /memories/notes.md"
        )
        await ok(tool, command="create", path="/memories/projects/x/plan.md", file_text="é" * 600)
        await ok(tool, command="create", path="/memories/projects/todo.txt", file_text="ship it")
        await ok(tool, command="create", path="/memories/.hidden", file_text="secret")
        assert await ok(tool, command="view", path="/memories/notes.md") == (
            "Here's the content of /memories/notes.md with line numbers:\n"
            "     1\ta\n     2\tb\n     3\tc"
        )
        assert await ok(tool, command="view", path="/memories/notes.md", view_range=[2, -1]) == (
            "Here's the content of /memories/notes.md with line numbers:\n     2\tb\n     3\tc"
        )
        assert await listing(tool) == (
            "Here're the files and directories up to 2 levels deep in /memories, excluding "
            "hidden items:\n"
            "1.2K\t/memories\n"
            "5B\t/memories/notes.md\n"
            "1.2K\t/memories/projects/\n"
            "7B\t/memories/projects/todo.txt\n"
            "1.2K\t/memories/projects/x/"
        )
        assert (await ok(tool, command="view", path="/memories/projects/")).endswith(
            "1.2K\t/memories/projects\n7B\t/memories/projects/todo.txt\n"
            "1.2K\t/memories/projects/x/\n1.2K\t/memories/projects/x/plan.md"
        )
        assert "does not exist" in await refused(tool, command="view", path="/memories/nope")
        assert "already exists" in await refused(
            tool, command="create", path="/memories/notes.md", file_text="again"
        )
        assert "already exists" in await refused(
            tool, command="create", path="/memories/projects", file_text="a file over a dir"
        )
        assert "is a file" in await refused(
            tool, command="create", path="/memories/notes.md/inner", file_text="x"
        )
        await ok(tool, command="create", path="/memories/empty.md", file_text="")
        assert await ok(tool, command="view", path="/memories/empty.md") == (
            "Here's the content of /memories/empty.md with line numbers:\n     1\t"
        )


async def test_str_replace_and_insert_as_the_sdk_does(url: str) -> None:
    with GraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        path = "/memories/prefs.md"
        await ok(tool, command="create", path=path, file_text="coffee: black\ntea: green\nx\nx\n")
        edited = await ok(
            tool, command="str_replace", path=path, old_str="black", new_str="with oat milk"
        )
        assert edited.startswith("The memory file has been edited.")
        assert "     1\tcoffee: with oat milk" in edited
        before = await ok(tool, command="view", path=path)
        absent = await refused(tool, command="str_replace", path=path, old_str="cocoa", new_str="")
        assert "did not appear verbatim" in absent
        twice = await refused(tool, command="str_replace", path=path, old_str="x", new_str="y")
        assert "Multiple occurrences of old_str `x` in lines: 3, 4" in twice
        assert await ok(tool, command="view", path=path) == before  # refusals changed nothing
        assert await ok(
            tool, command="insert", path=path, insert_line=0, insert_text="# Prefs\n"
        ) == (f"The file {path} has been edited.")
        assert "[0, 5]" in await refused(
            tool, command="insert", path=path, insert_line=9, insert_text="z"
        )
        assert (await ok(tool, command="view", path=path, view_range=[1, 2])).endswith(
            "     1\t# Prefs\n     2\tcoffee: with oat milk"
        )
        assert "is not a file" in await refused(
            tool, command="str_replace", path="/memories", old_str="a", new_str="b"
        )
        assert "does not exist" in await refused(
            tool, command="insert", path="/memories/none", insert_line=0, insert_text="z"
        )
    with Graphmem(url, KEYS[0]) as gm:
        (item,) = gm.store_items(tool.tool.files.namespace)
        assert item.key == path and item.value["path"] == path
        assert item.value["text"].startswith("# Prefs\ncoffee: with oat milk")


async def test_rename_and_delete(url: str) -> None:
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        await ok(tool, command="create", path="/memories/a.md", file_text="alpha")
        await ok(tool, command="create", path="/memories/b.md", file_text="beta")
        await ok(tool, command="create", path="/memories/dir/c.md", file_text="gamma")
        await ok(tool, command="create", path="/memories/dir/sub/d.md", file_text="delta")
        assert "already exists" in await refused(
            tool, command="rename", old_path="/memories/a.md", new_path="/memories/b.md"
        )
        assert "already exists" in await refused(
            tool, command="rename", old_path="/memories/a.md", new_path="/memories/dir"
        )
        assert "is a file" in await refused(
            tool, command="rename", old_path="/memories/a.md", new_path="/memories/b.md/a.md"
        )
        assert "into itself" in await refused(
            tool, command="rename", old_path="/memories/dir", new_path="/memories/dir/sub/x"
        )
        assert "does not exist" in await refused(
            tool, command="rename", old_path="/memories/zz", new_path="/memories/yy"
        )
        assert await ok(
            tool, command="rename", old_path="/memories/a.md", new_path="/memories/old/a.md"
        ) == ("Successfully renamed /memories/a.md to /memories/old/a.md")
        await ok(tool, command="rename", old_path="/memories/dir", new_path="/memories/moved")
        assert [line.split("\t")[1] for line in (await listing(tool)).splitlines()[1:]] == [
            "/memories",
            "/memories/b.md",
            "/memories/moved/",
            "/memories/moved/c.md",
            "/memories/moved/sub/",
            "/memories/old/",
            "/memories/old/a.md",
        ]
        assert (await ok(tool, command="view", path="/memories/moved/sub/d.md")).endswith("delta")
        assert "itself" in await refused(tool, command="delete", path="/memories")
        assert "does not exist" in await refused(tool, command="delete", path="/memories/x")
        assert await ok(tool, command="delete", path="/memories/moved") == (
            "Successfully deleted /memories/moved"
        )
        await ok(tool, command="delete", path="/memories/b.md")
        assert (await listing(tool)).splitlines()[1:] == [
            "5B\t/memories",
            "5B\t/memories/old/",
            "5B\t/memories/old/a.md",
        ]
        assert await tool.clear_all_memory() == "All memory cleared"
        assert (await listing(tool)).splitlines()[1:] == ["0B\t/memories"]


HOSTILE_PATHS = [
    "/memories/../etc/passwd",
    "/memories/a/../../x",
    "/memories/./a",
    "/etc/passwd",
    "memories/a",
    "/memoriesx/a",
    "/memories\\..\\a",
    "/memories/a\x00b",
    "/memories/a\nb",
    "/memories//a",
    "/memories/" + "a" * 300,
    "/memories/" + "a/" * 40 + "f",
    "/memories/" + "x" * 2000,
    "/memories/\ud800",
]


@pytest.mark.parametrize("path", HOSTILE_PATHS)
async def test_paths_outside_memories_are_refused_and_change_nothing(url: str, path: str) -> None:
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        await ok(tool, command="create", path="/memories/keep.md", file_text="kept")
        before = await listing(tool)
        await refused(tool, command="create", path=path, file_text="x")
        await refused(tool, command="view", path=path)
        await refused(tool, command="rename", old_path="/memories/keep.md", new_path=path)
        await refused(tool, command="delete", path=path)
        assert await listing(tool) == before


async def test_hostile_arguments_are_tool_errors(url: str) -> None:
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        await refused(tool, command="view", path=42)
        await refused(tool, command="view")
        await refused(tool, command="create", path="/memories/a")
        await refused(tool, command="create", path="/memories/a", file_text=["x"])
        await refused(tool, command="format_disk", path="/memories")
        await refused(tool, command="insert", path="/memories/a", insert_line="1", insert_text="")
        await ok(tool, command="create", path="/memories/a", file_text="x")
        await refused(tool, command="view", path="/memories/a", view_range="1-2")
        await refused(tool, command="create", path="/memories/b", file_text="nul\x00")
        assert "b" not in await listing(tool)


async def test_size_bound_and_a_refused_edit_leave_the_file_intact(url: str) -> None:
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        too_big = await refused(
            tool, command="create", path="/memories/big", file_text="x" * 20_001
        )
        assert "at most 20000" in too_big
        assert "big" not in await listing(tool)
    # A refused edit (old_str absent) writes nothing: the file is as it was.
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        await ok(tool, command="create", path="/memories/f.md", file_text="small\n")
        await refused(
            tool, command="str_replace", path="/memories/f.md", old_str="absent", new_str="y"
        )
        assert (await ok(tool, command="view", path="/memories/f.md")).endswith(
            "1\tsmall\n     2\t"
        )
        assert await tool.files.files() == {"/memories/f.md": "small\n"}


async def test_concurrent_edits_of_one_file_leave_one_writers_content(url: str) -> None:
    """Each edit is one putItems of the file's item: whatever the interleaving, the file
    is one file holding one writer's whole result, never two copies and never none."""
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=session()) as tool:
        path = "/memories/race.md"
        await ok(tool, command="create", path=path, file_text="base\n")
        writers = [f"writer-{n}-" + "x" * 200 for n in range(12)]
        edits = [
            run(tool, command="str_replace", path=path, old_str="base", new_str=w) for w in writers
        ]
        inserts = [
            run(tool, command="insert", path=path, insert_line=0, insert_text=f"line {n}")
            for n in range(4)
        ]
        await asyncio.gather(*edits, *inserts)
        held = await tool.files.files()
        assert list(held) == [path]
        text = held[path]
        # one replace won the base text: the file holds exactly one writer's string
        # (whole), plus any inserts that read after it; nothing is interleaved
        assert sum(w in text for w in writers) <= 1
        assert text.count("writer-") == sum(w in text for w in writers)
        lines = text.splitlines()
        assert all(
            line.startswith("line ") or line in writers or line == "base" for line in lines
        ), text
        # and a concurrent view never sees none of it: the file is always there
        views = await asyncio.gather(
            *(run(tool, command="view", path=path) for _ in range(8)),
            *(
                run(tool, command="insert", path=path, insert_line=0, insert_text="z")
                for _ in range(8)
            ),
        )
        assert not any(failed for _, failed in views), views
    with Graphmem(url, KEYS[0]) as gm:
        assert [i.key for i in gm.store_items(tool.files.namespace)] == [path]


async def test_files_are_recalled_by_meaning_within_their_scope(url: str) -> None:
    sid = session()
    async with AsyncGraphmemMemoryTool(url, KEYS[1], session_id=sid, user_id="ada") as tool:
        await ok(tool, command="create", path="/memories/pets.md", file_text="Ada's cat is Tom")
        await ok(tool, command="create", path="/memories/job.md", file_text="Ada flies planes")
        await ok(
            tool, command="str_replace", path="/memories/pets.md", old_str="Tom", new_str="Whiskers"
        )
    with Graphmem(url, KEYS[1]) as gm:
        hits = gm.search_items(("users", "ada"), query="what pet does she have, an animal")
        assert hits and hits[0].value["path"] == "/memories/pets.md"
        assert hits[0].value["text"] == "Ada's cat is Whiskers"
        assert {h.value["path"] for h in hits} == {"/memories/pets.md", "/memories/job.md"}
    # another session of the tenant, and the other tenant's same session, see nothing
    async with AsyncGraphmemMemoryTool(url, KEYS[1], session_id=session()) as other:
        assert (await listing(other)).splitlines()[1:] == ["0B\t/memories"]
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=sid) as other:
        assert (await listing(other)).splitlines()[1:] == ["0B\t/memories"]
        assert "does not exist" in await refused(other, command="view", path="/memories/pets.md")


def old_file(session_id: str, path: str, text: str, user_id: str | None = None) -> dict[str, Any]:
    """A file as graphmem of 2026-11-27 wrote it: a memory of the tool's session, its
    path in the metadata (a blank file's memory held the path, its text ``amText``)."""
    metadata: dict[str, Any] = {"amPath": path, "amBytes": len(text.encode())}
    if not text.strip():
        metadata["amText"] = text
    return memory(
        session_id, text if text.strip() else path, type="FACT", user_id=user_id, metadata=metadata
    )


async def test_files_kept_as_memories_by_the_earlier_layout_become_items(url: str) -> None:
    sid = session()
    with Graphmem(url, KEYS[0]) as gm:
        gm.add_many([old_file(sid, "/memories/a.md", "first version", "ada")])
        gm.add_many(
            [
                old_file(sid, "/memories/a.md", "second version", "ada"),
                old_file(sid, "/memories/notes/blank.md", "  ", "ada"),
                old_file(sid, "/memories/c.md", "stale copy", "ada"),
            ]
        )
        # not a path the tool could have written: no file, and its memory is left alone
        (odd,) = gm.add_many([old_file(sid, "/elsewhere/x", "not a file", "ada")])
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=sid, user_id="ada") as first:
        # a tool that moved the files first and edited c.md since: its edit is newer
        # than any old copy, so a second tool's move leaves it as it is
        await first.files.write({"/memories/c.md": "edited after the move"})
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=sid, user_id="ada") as tool:
        assert await ok(tool, command="view", path="/memories/a.md") == (
            "Here's the content of /memories/a.md with line numbers:\n     1\tsecond version"
        )
        assert await ok(tool, command="view", path="/memories/c.md") == (
            "Here's the content of /memories/c.md with line numbers:\n     1\tedited after the move"
        )
        assert await ok(tool, command="view", path="/memories/notes/blank.md") == (
            "Here's the content of /memories/notes/blank.md with line numbers:\n     1\t  "
        )
        await ok(
            tool, command="str_replace", path="/memories/a.md", old_str="second", new_str="3rd"
        )
    with Graphmem(url, KEYS[0]) as gm:
        left = gm.memories(session_id=sid, metadata_field="amPath")
        assert [m.id for m in left.items] == [odd.id]
        paths = {i.value["path"]: i.value["text"] for i in gm.store_items(tool.files.namespace)}
        assert paths == {
            "/memories/a.md": "3rd version",
            "/memories/c.md": "edited after the move",
            "/memories/notes/blank.md": "  ",
        }
    # a later tool finds nothing more to move, and the files are as they were
    async with AsyncGraphmemMemoryTool(url, KEYS[0], session_id=sid, user_id="ada") as again:
        assert await again.files.adopt() == 0
        assert (await again.files.files())["/memories/a.md"] == "3rd version"
