"""What ``graphmem import`` reads, as records ready for ``addMemories``.

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
from typing import Any

#: the metadata field holding a memory's import id; export leaves it out
IMPORT_ID = "graphmemImportId"
TIERS = ("HOT", "WARM", "COLD")


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


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def _locomo_time(raw: str) -> str:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).isoformat()


def locomo(doc: dict[str, Any]) -> Iterator[Record]:
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
            )
        n += 1


def chat(doc: dict[str, Any], number: int) -> Iterator[Record]:
    """An OpenAI-style chat, ``{"messages": [{"role", "content"}], "id"?, "session_id"?,
    "user_id"?}``: one memory per message with text, its role in the metadata."""
    session = str(doc.get("session_id") or doc.get("id") or f"chat-{number}")
    for turn, message in enumerate(doc["messages"]):
        content = message.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str) or not content.strip():
            continue
        yield Record(
            import_id=f"chat:{session}:{turn}",
            session_id=session,
            user_id=doc.get("user_id"),
            content=content,
            metadata={"role": message.get("role", "user")},
            occurred_at=message.get("created_at"),
        )


def memory(doc: dict[str, Any], number: int, line: str) -> Record:
    """A memory line: graphmem's export format (``kind: memory``) or any object with
    ``sessionId`` and ``content``."""
    tier = str(doc.get("tier") or "HOT").upper()
    if tier not in TIERS:
        raise ValueError(f"line {number}: tier must be one of {', '.join(TIERS)}")
    ident = doc.get("id")
    return Record(
        import_id=f"memory:{ident}" if ident else f"line:{number}:{_digest(line)}",
        session_id=str(doc["sessionId"]),
        user_id=doc.get("userId"),
        content=str(doc["content"]),
        type=str(doc.get("type") or "MESSAGE").upper(),
        metadata=dict(doc.get("metadata") or {}),
        occurred_at=doc.get("occurredAt"),
        tier=tier,
    )


def _documents(path: Path) -> Iterator[tuple[int, dict[str, Any], str]]:
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):  # one JSON array, like LoCoMo's file
        for number, doc in enumerate(json.loads(text), 1):
            yield number, doc, json.dumps(doc, sort_keys=True)
        return
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield number, json.loads(line), line


def tasks(path: Path) -> Iterator[dict[str, Any]]:
    """The exported tasks of a file (``kind: task`` lines), each an ``importTask`` input."""
    for _, doc, _ in _documents(path):
        if isinstance(doc, dict) and doc.get("kind") == "task":
            yield {k: v for k, v in doc.items() if k != "kind"}


def records(path: Path) -> Iterator[Record]:
    """Every memory record of a file; exported entities (which spill derives again from
    the memories) and tasks (``tasks``) are not memories."""
    for number, doc, line in _documents(path):
        if not isinstance(doc, dict):
            raise ValueError(f"{path}:{number}: not a JSON object")
        if "conversation" in doc and "sample_id" in doc:
            yield from locomo(doc)
        elif isinstance(doc.get("messages"), list):
            yield from chat(doc, number)
        elif doc.get("kind", "memory") == "memory":
            yield memory(doc, number, line)
