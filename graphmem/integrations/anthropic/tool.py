"""Claude's memory tool (``memory_20250818``) over graphmem: ``AsyncGraphmemMemoryTool``
and the synchronous ``GraphmemMemoryTool``, backends of the SDK's abstract memory tools.

The SDK parses the model's input without validating it, so every argument is checked
here; refusals are ``ToolError`` (the runner answers the model with ``is_error``), as are
graphmem's BAD_INPUT, NOT_FOUND, QUOTA_EXCEEDED and RATE_LIMITED answers. Files live in
one namespace of graphmem's store items (a session, and a user) chosen by the caller:
``store.py`` says how.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine
from types import TracebackType
from typing import Any, TypeVar

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from graphmem.client import (
    AsyncGraphmem,
    BadInput,
    NotFound,
    QuotaExceeded,
    RateLimited,
)
from graphmem.integrations.anthropic import files
from graphmem.integrations.anthropic.paths import ROOT, ancestors, canonical, under
from graphmem.integrations.anthropic.store import FileStore

#: graphmem's memory content limit, kept as a file's bound (a store item holds more)
MAX_FILE_CHARS = 20_000
#: ``putItems`` takes 500 puts: a rename deletes and puts each file, in one call
MAX_RENAME_FILES = 250
COMMANDS = {"view", "create", "str_replace", "insert", "delete", "rename"}
_ID = re.compile(r"[A-Za-z0-9_.@-]{1,128}")
T = TypeVar("T")


def _arg(command: object, name: str, kind: type[T]) -> T:
    value = getattr(command, name, None)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ToolError(f"`{name}` must be a {kind.__name__}")
    return value


class AsyncGraphmemMemoryTool(BetaAsyncAbstractMemoryTool):
    """The memory tool's files in graphmem session ``session_id`` of the key's tenant
    (with ``user_id``, under the user's namespace: forgetUser and export by user take
    them). ``max_file_chars`` bounds a file."""

    def __init__(
        self,
        url: str,
        key: str,
        *,
        session_id: str = "memories",
        user_id: str | None = None,
        memory_type: str = "FACT",
        max_file_chars: int = MAX_FILE_CHARS,
        timeout: float = 60.0,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        for name, value in (("session_id", session_id), ("user_id", user_id)):
            if value is not None and not _ID.fullmatch(value):
                raise ValueError(f"{name} must be 1-128 characters of A-Z a-z 0-9 _ . @ -")
        self.max_file_chars = max_file_chars
        self.client = AsyncGraphmem(url, key, timeout=timeout)
        # memory_type is kept for callers of the memory-backed files; items have none
        self.files = FileStore(self.client, session_id, user_id)
        # the earlier layout's files are moved into items before the first command
        self._adopted = False
        self._adopting = asyncio.Lock()

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> AsyncGraphmemMemoryTool:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def execute(self, command: BetaMemoryTool20250818Command) -> str:
        if getattr(command, "command", None) not in COMMANDS:
            raise ToolError(f"Unknown command: {str(getattr(command, 'command', None))[:50]}")
        try:
            await self.adopt()
            result = await super().execute(command)
        except (BadInput, NotFound, QuotaExceeded, RateLimited) as exc:
            raise ToolError(str(exc)) from exc
        assert isinstance(result, str)
        return result

    async def adopt(self) -> None:
        """Once per tool, before its first command: files that graphmem of 2026-11-27
        kept as memories of this session become items (``FileStore.adopt``). A failure
        leaves them, and the next command tries again."""
        async with self._adopting:
            if not self._adopted:
                await self.files.adopt()
                self._adopted = True

    # --- helpers ------------------------------------------------------------------------
    def _text(self, text: str, path: str) -> str:
        if len(text) > self.max_file_chars:
            raise ToolError(
                f"File {path} would be {len(text)} characters; at most "
                f"{self.max_file_chars} fit in one file."
            )
        if "\x00" in text:
            raise ToolError("File content must not contain NUL characters")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ToolError("File content must be valid Unicode") from exc
        return text

    async def _file(self, path: str) -> str:
        """A file's text; ``ToolError`` for a directory or nothing."""
        text = None if path == ROOT else await self.files.read(path)
        if text is not None:
            return text
        if path == ROOT or any(under(p, path) for p in await self.files.files()):
            raise ToolError(f"The path {path} is not a file.")
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")

    # --- commands -----------------------------------------------------------------------
    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = canonical(getattr(command, "path", None))
        text = None if path == ROOT else await self.files.read(path)
        if text is not None:
            return files.view_file(path, text, getattr(command, "view_range", None))
        sizes = {p: files.size_of(t) for p, t in (await self.files.files()).items()}
        if path == ROOT or any(under(p, path) for p in sizes):
            return files.view_directory(path, sizes)
        raise ToolError(f"The path {path} does not exist. Please provide a valid path.")

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = canonical(getattr(command, "path", None))
        text = self._text(_arg(command, "file_text", str), path)
        if path == ROOT:
            raise ToolError("Cannot create a file at /memories itself")
        found = await self.files.files()
        if path in found or any(under(p, path) for p in found):
            raise ToolError(f"File {path} already exists")
        for parent in ancestors(path):
            if parent in found:
                raise ToolError(f"The path {parent} is a file, not a directory")
        await self.files.write({path: text})
        return f"File created successfully at: {path}"

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path = canonical(getattr(command, "path", None))
        old, new = _arg(command, "old_str", str), _arg(command, "new_str", str)
        changed, answer = files.replace(path, await self._file(path), old, new)
        await self.files.write({path: self._text(changed, path)})
        return answer

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path = canonical(getattr(command, "path", None))
        line, new = _arg(command, "insert_line", int), _arg(command, "insert_text", str)
        changed = files.insert(await self._file(path), line, new)
        await self.files.write({path: self._text(changed, path)})
        return f"The file {path} has been edited."

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = canonical(getattr(command, "path", None))
        if path == ROOT:
            raise ToolError("Cannot delete the /memories directory itself")
        found = await self.files.files()
        doomed = [path] if path in found else [p for p in found if under(p, path)]
        if not doomed:
            raise ToolError(f"The path {path} does not exist")
        await self.files.write(dict.fromkeys(doomed))
        return f"Successfully deleted {path}"

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old = canonical(getattr(command, "old_path", None))
        new = canonical(getattr(command, "new_path", None))
        if old == ROOT:
            raise ToolError("Cannot rename the /memories directory itself")
        found = await self.files.files()
        if new == ROOT or new in found or any(under(p, new) for p in found):
            raise ToolError(f"The destination {new} already exists")
        if under(new, old):
            raise ToolError(f"Cannot move {old} into itself")
        for parent in ancestors(new):
            if parent in found:
                raise ToolError(f"The path {parent} is a file, not a directory")
        moves = (
            {old: new}
            if old in found
            else {p: canonical(new + p[len(old) :]) for p in found if under(p, old)}
        )
        if not moves:
            raise ToolError(f"The path {old} does not exist")
        if len(moves) > MAX_RENAME_FILES:
            raise ToolError(f"Cannot rename more than {MAX_RENAME_FILES} files at once")
        # the old files' deletes and the new ones' puts in one putItems: the whole move
        # or nothing, never both copies
        changes: dict[str, str | None] = dict.fromkeys(moves)
        changes.update({to: found[frm] for frm, to in moves.items()})
        await self.files.write(changes)
        return f"Successfully renamed {old} to {new}"

    async def clear_all_memory(self) -> str:
        await self.adopt()
        await self.files.write(dict.fromkeys(await self.files.files()))
        return "All memory cleared"


class GraphmemMemoryTool(BetaAbstractMemoryTool):
    """``AsyncGraphmemMemoryTool`` for the synchronous client and tool runner: the same
    arguments, each command run on an event loop in a thread of the tool's own."""

    def __init__(self, url: str, key: str, **options: Any) -> None:
        super().__init__(cache_control=options.get("cache_control"))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="graphmem-memory-tool", daemon=True
        )
        self._thread.start()
        self.tool = AsyncGraphmemMemoryTool(url, key, **options)

    def _wait(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._wait(self.tool.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def __enter__(self) -> GraphmemMemoryTool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def execute(self, command: BetaMemoryTool20250818Command) -> str:
        return self._wait(self.tool.execute(command))

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self.execute(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self.execute(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self.execute(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self.execute(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self.execute(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self.execute(command)

    def clear_all_memory(self) -> str:
        return self._wait(self.tool.clear_all_memory())
