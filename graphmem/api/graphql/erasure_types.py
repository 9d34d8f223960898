"""The GraphQL shape of an erasure receipt (docs/concepts.md#erasure)."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

from graphmem.memory.erasure.receipt import canonical


@strawberry.type(
    description="A signed record of an erasure: its subject, when, what was removed from "
    "each place, and what a second look at each place found (ids and counts only). "
    "Save `document` as it is to check it with `graphmem receipt verify FILE`."
)
class ErasureReceipt:
    id: strawberry.ID
    at: str = strawberry.field(description="the moment of the erasure (its tombstone), ISO 8601")
    subject: JSON
    removed: JSON
    verification: JSON = strawberry.field(
        description="per place, what was found after the erasure; `clean` when nothing"
    )
    clean: bool = strawberry.field(description="the verification found nothing of the subject")
    signature: str
    document: str = strawberry.field(
        description="the whole signed receipt as canonical JSON: the text to save and verify"
    )

    @classmethod
    def of(cls, receipt: dict[str, Any]) -> ErasureReceipt:
        return cls(
            id=strawberry.ID(receipt["id"]),
            at=str(receipt["at"]),
            subject=receipt["subject"],
            removed=receipt["removed"],
            verification=receipt["verification"],
            clean=bool(receipt["verification"].get("clean")),
            signature=str(receipt["signature"]["value"]),
            document=canonical(receipt).decode("utf-8"),
        )


@strawberry.type
class ForgetResult:
    hot_memories: int
    graph_memories: int
    entities: int = strawberry.field(
        description="Entities removed because nobody else mentions them"
    )
    receipt: ErasureReceipt


@strawberry.type
class ForgetSessionResult:
    hot_memories: int
    graph_memories: int
    sessions: int
    messages: int = strawberry.field(description="short-term messages of the session removed")
    entities: int = strawberry.field(
        description="Entities removed because nobody else mentions them"
    )
    receipt: ErasureReceipt


@strawberry.type
class ForgetTaskResult:
    tasks: int
    steps: int
    transfers: int = strawberry.field(description="hand-overs of its audit trail removed")
    episodes: int
    reflections: int = strawberry.field(
        description="reflections drawn from its episodes removed (reflect derives them "
        "again from the episodes that remain)"
    )
    working_memory: int = strawberry.field(description="keys of its working memory removed")
    receipt: ErasureReceipt


@strawberry.type
class ForgetRecordsResult:
    records: int
    receipt: ErasureReceipt


@strawberry.type
class ErasureReceiptPage:
    items: list[ErasureReceipt]
    next: str | None = strawberry.field(description="the cursor of the next page; null at the end")
