"""What ``graphmem import`` reads, as records ready for ``addMemories``, one entry of the
file at a time: a JSONL file is read line by line (a JSON array, as LoCoMo's, is read
whole), and a line that cannot be read is an entry too (``Skipped``, with where and why)
rather than the end of the import.

Every record gets an import id derived from the input alone (the exported memory's id,
LoCoMo's sample and dialogue ids, a chat's id and turn, or a line's number and hash), so
a second run over the same file recognises what the first one added.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

#: the metadata field holding a memory's import id; export leaves it out
IMPORT_ID = "graphmemImportId"
TIERS = ("HOT", "WARM", "COLD")
#: a longer line is skipped unread: no request could carry it (the API's body limit)
MAX_LINE_BYTES = 16 * 1024 * 1024
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Record:
    import_id: str
    session_id: str
    content: str
    type: str = "MESSAGE"
    user_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    occurred_at: str | None = None
    tier: str = "HOT"
    #: where in the file it came from ("line 12"), for reports
    where: str = ""
    #: the memory's id where it was exported from (an erasure of it is named by it)
    origin_id: str | None = None
    #: the exported memory was retracted (when, and why): the import retracts it again
    retracted_at: str | None = None
    retract_reason: str | None = None

    def memory(self) -> dict[str, Any]:
        """An ``AddMemoryInput``, the import id in its metadata."""
        memory: dict[str, Any] = {
            "sessionId": self.session_id,
            "content": self.content,
            "type": self.type,
            "metadata": {**self.metadata, IMPORT_ID: self.import_id},
        }
        if self.user_id is not None:
            memory["userId"] = self.user_id
        if self.occurred_at is not None:
            memory["occurredAt"] = self.occurred_at
        return memory


@dataclass(frozen=True)
class TaskEntry:
    """An exported task (a ``kind: task`` line), as ``importTask`` takes it."""

    task: dict[str, Any]
    where: str


@dataclass(frozen=True)
class Header:
    """An export's first line (``kind: export``): the moment it was taken."""

    at: str | None
    where: str


@dataclass(frozen=True)
class ReceiptEntry:
    """An exported erasure receipt (a ``kind: receipt`` line), as it was signed."""

    receipt: dict[str, Any]
    where: str


@dataclass(frozen=True)
class ItemEntry:
    """An exported LangGraph store item (``kind: item``), as ``putItems`` takes it back."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: str | None
    updated_at: str | None
    where: str


@dataclass(frozen=True)
class GraphEntry:
    """An exported knowledge-graph entity (``kind: kg_entity``: name, entityType,
    observations) or relation (``kind: kg_relation``: from, to, relationType)."""

    kind: str
    doc: dict[str, Any]
    where: str


@dataclass(frozen=True)
class Skipped:
    """An entry of the file that is not imported, and why."""

    where: str
    reason: str


Entry = Record | TaskEntry | Header | ReceiptEntry | ItemEntry | GraphEntry | Skipped


class BadEntry(ValueError):
    """An entry whose shape is not one import reads; the message says what is wrong."""


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def _locomo_time(raw: str) -> str:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).isoformat()


def _text(doc: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    """A field that must be text (or absent, unless ``required``)."""
    value = doc.get(key)
    if value is None:
        if required:
            raise BadEntry(f"{key} is missing")
        return None
    if not isinstance(value, str):
        raise BadEntry(f"{key} must be a string")
    return value


def _object(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadEntry(f"{key} must be an object")
    return value


def locomo(doc: dict[str, Any], where: str = "") -> Iterator[Record]:
    """One memory per turn, "Speaker: text" (and the image caption), in session
    ``<sample>-s<n>`` of user ``<sample>``: the way bench/locomo.py ingests them."""
    sample, conv = str(doc["sample_id"]), doc["conversation"]
    n = 1
    while f"session_{n}" in conv:
        when = _locomo_time(conv[f"session_{n}_date_time"])
        for turn in conv[f"session_{n}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            yield Record(
                import_id=f"locomo:{sample}:{turn['dia_id']}",
                session_id=f"{sample}-s{n}",
                user_id=sample,
                content=text,
                occurred_at=when,
                metadata={"dia_id": turn["dia_id"], "speaker": turn["speaker"]},
                where=where,
            )
        n += 1


def chat(doc: dict[str, Any], number: int, where: str = "") -> Iterator[Record]:
    """An OpenAI-style chat, ``{"messages": [{"role", "content"}], "id"?, "session_id"?,
    "user_id"?}``: one memory per message with text, its role in the metadata."""
    session = str(doc.get("session_id") or doc.get("id") or f"chat-{number}")
    for turn, message in enumerate(doc["messages"]):
        if not isinstance(message, dict):
            raise BadEntry(f"message {turn} is not an object")
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str) or not content.strip():
            continue
        yield Record(
            import_id=f"chat:{session}:{turn}",
            session_id=session,
            user_id=_text(doc, "user_id"),
            content=content,
            metadata={"role": message.get("role", "user")},
            occurred_at=_text(message, "created_at"),
            where=where,
        )


def memory(doc: dict[str, Any], number: int, line: str, where: str = "") -> Record:
    """A memory line: graphmem's export format (``kind: memory``) or any object with
    ``sessionId`` and ``content``."""
    tier = str(doc.get("tier") or "HOT").upper()
    if tier not in TIERS:
        raise BadEntry(f"tier must be one of {', '.join(TIERS)}")
    ident = doc.get("id")
    if ident is not None and not isinstance(ident, str | int):
        raise BadEntry("id must be a string")
    session = doc.get("sessionId")
    if not isinstance(session, str | int) or isinstance(session, bool):
        raise BadEntry("sessionId is missing" if session is None else "sessionId must be a string")
    return Record(
        import_id=f"memory:{ident}" if ident else f"line:{number}:{_digest(line)}",
        session_id=str(session),
        user_id=_text(doc, "userId"),
        content=_text(doc, "content", required=True) or "",
        type=(_text(doc, "type") or "MESSAGE").upper(),
        metadata=_object(doc, "metadata"),
        occurred_at=_text(doc, "occurredAt"),
        tier=tier,
        where=where,
        origin_id=str(ident) if ident else None,
        retracted_at=_text(doc, "retractedAt"),
        retract_reason=_text(doc, "retractReason"),
    )


def _texts(doc: dict[str, Any], key: str) -> list[str]:
    value = doc.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadEntry(f"{key} must be a list of strings")
    return value


def item(doc: dict[str, Any], where: str) -> ItemEntry:
    value = doc.get("value")
    if not isinstance(value, dict):
        raise BadEntry("value must be an object")
    return ItemEntry(
        namespace=tuple(_texts(doc, "namespace")),
        key=_text(doc, "key", required=True) or "",
        value=value,
        created_at=_text(doc, "createdAt"),
        updated_at=_text(doc, "updatedAt"),
        where=where,
    )


def graph(doc: dict[str, Any], kind: str, where: str) -> GraphEntry:
    if kind == "kg_entity":
        fields = {"name": _text(doc, "name", required=True)}
        fields["entityType"] = _text(doc, "entityType", required=True)
        return GraphEntry(kind, {**fields, "observations": _texts(doc, "observations")}, where)
    names = ("from", "to", "relationType")
    return GraphEntry(kind, {n: _text(doc, n, required=True) for n in names}, where)


def _lines(f: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """Each line (None for one longer than ``MAX_LINE_BYTES``, read past unkept)."""
    number = 0
    while raw := f.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
            yield number, raw
            continue
        while (more := f.readline(MAX_LINE_BYTES)) and not more.endswith(b"\n"):
            pass
        yield number, None


def _decoded(raw: bytes) -> tuple[Any, str]:
    """A JSON value and its text, or ``BadEntry`` saying why the bytes are not one."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadEntry("not UTF-8") from exc
    try:
        return json.loads(text), text
    except json.JSONDecodeError as exc:
        raise BadEntry(f"not JSON ({exc.msg} at column {exc.colno})") from exc
    except ValueError as exc:  # an integer of more digits than Python reads
        raise BadEntry("a number too long to read") from exc
    except RecursionError as exc:
        raise BadEntry("nested too deep") from exc


def _documents(path: Path) -> Iterator[tuple[int, str, Any, str] | Skipped]:
    """(number, where, JSON value, its text) per entry, or where and why it is not one.
    Never seeks, so a pipe (``/dev/stdin``) works too."""
    with path.open("rb") as f:
        if f.peek(4096).removeprefix(BOM).lstrip().startswith(b"["):
            # one JSON array, like LoCoMo's file: read whole
            try:
                docs, _ = _decoded(f.read().removeprefix(BOM))
            except BadEntry as exc:
                yield Skipped("the JSON array", str(exc))
                return
            for number, doc in enumerate(docs, 1):
                yield number, f"item {number}", doc, json.dumps(doc, sort_keys=True)
            return
        for number, raw in _lines(f):
            where = f"line {number}"
            if raw is None:
                yield Skipped(where, f"longer than {MAX_LINE_BYTES} bytes")
                continue
            if number == 1:
                raw = raw.removeprefix(BOM)
            if not raw.strip():
                continue
            try:
                doc, text = _decoded(raw)
            except BadEntry as exc:
                yield Skipped(where, str(exc))
                continue
            yield number, where, doc, text.rstrip("\r\n")


def _read(
    number: int, where: str, doc: Any, text: str
) -> list[Record | TaskEntry | Header | ReceiptEntry | ItemEntry | GraphEntry]:
    """The records (or the task) of one entry, all or none: ``BadEntry``, ``KeyError``
    and the like when its shape is wrong."""
    if not isinstance(doc, dict):
        raise BadEntry("not a JSON object")
    if "conversation" in doc and "sample_id" in doc:
        return list(locomo(doc, where))
    if isinstance(doc.get("messages"), list):
        return list(chat(doc, number, where))
    kind = doc.get("kind", "memory")
    if kind == "memory":
        return [memory(doc, number, text, where)]
    if kind == "task":
        return [TaskEntry({k: v for k, v in doc.items() if k != "kind"}, where)]
    if kind == "export":
        return [Header(_text(doc, "at"), where)]
    if kind == "receipt":
        receipt = doc.get("receipt")
        if not isinstance(receipt, dict):
            raise BadEntry("receipt must be an object")
        return [ReceiptEntry(receipt, where)]
    if kind == "item":
        return [item(doc, where)]
    if kind in ("kg_entity", "kg_relation"):
        return [graph(doc, kind, where)]
    if kind == "entity":  # spilling the memories derives the entities again
        return []
    raise BadEntry(f"kind {str(kind)[:40]!r} is not one import reads")


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"{exc.args[0]!s:.40} is missing"
    if isinstance(exc, BadEntry):
        return str(exc)
    return f"not the shape import reads ({type(exc).__name__}: {str(exc)[:120]})"


def entries(path: Path) -> Iterator[Entry]:
    """Every entry of a file in order: its memory records, its exported tasks, and what
    was skipped (exported entities are neither: spills derive them again)."""
    for found in _documents(path):
        if isinstance(found, Skipped):
            yield found
            continue
        number, where, doc, text = found
        try:
            yield from _read(number, where, doc, text)
        except (BadEntry, KeyError, TypeError, AttributeError, ValueError) as exc:
            yield Skipped(where, _reason(exc))


def records(path: Path) -> Iterator[Record]:
    """Every memory record of a file (what ``entries`` yields, less the rest)."""
    return (e for e in entries(path) if isinstance(e, Record))


def tasks(path: Path) -> Iterator[dict[str, Any]]:
    """The exported tasks of a file (``kind: task`` lines), each an ``importTask`` input."""
    return (e.task for e in entries(path) if isinstance(e, TaskEntry))
