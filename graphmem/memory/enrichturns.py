"""Which admitted items the enrichment worker (``worker.py``) embeds, or reads for
entities, next: a call of about ``seconds`` of work, the tenants taking turns an item at a
time.

A call's length is what another tenant's new memory waits for, so calls are cut by their
estimated cost, not by their number of items: one tenant's long memories (20 KB of text
takes a tenth of a second to embed and up to two seconds of NER) fill a call in a few
items, and the next call has room for everyone else's. The estimate is a rate per
character (``CostRate``), learned from the calls the worker has made.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..enrich.sentences import Embedded
from ..models import MemoryItem
from ..stores.models import EnrichmentJob

#: what an item costs beside its characters (a call's fixed work, spread over its items)
ITEM_OVERHEAD_CHARS = 200


@dataclass
class Piece:
    """One item of one job on its way through the worker: embedded, then read for
    entities; the job is acknowledged when all of its pieces are through."""

    job: EnrichmentJob
    item: MemoryItem
    embedded: Embedded | None = None

    @property
    def tenant(self) -> str:
        return self.job.tenant


@dataclass
class CostRate:
    """Seconds a stage spends per character, learned from its calls (an exponentially
    weighted mean, so that it follows the machine's load). ``cap_chars``: the characters
    past which an item costs no more (the embedder reads at most ``MAX_SENTENCES``
    sentences of a text, each cut at its token limit)."""

    seconds_per_char: float
    cap_chars: int | None = None
    weight: float = 0.3

    def chars(self, item: MemoryItem) -> int:
        size = len(item.content)
        if self.cap_chars is not None:
            size = min(size, self.cap_chars)
        return size + ITEM_OVERHEAD_CHARS

    def estimate(self, piece: Piece) -> float:
        return self.chars(piece.item) * self.seconds_per_char

    def learn(self, pieces: Sequence[Piece], seconds: float) -> None:
        chars = sum(self.chars(p.item) for p in pieces)
        if chars and seconds >= 0:
            seen = seconds / chars
            self.seconds_per_char += self.weight * (seen - self.seconds_per_char)


@dataclass
class Turns:
    """Each tenant's last turn: the call that last took one of its items."""

    served: dict[str, int] = field(default_factory=dict)
    calls: int = 0

    def took(self, chunk: Sequence[Piece], waiting: Sequence[Piece]) -> None:
        self.calls += 1
        for piece in chunk:
            self.served[piece.tenant] = self.calls
        left = {p.tenant for p in waiting}
        self.served = {t: c for t, c in self.served.items() if t in left}


def next_call(
    pending: Sequence[Piece],
    items: int,
    seconds: float,
    cost: Callable[[Piece], float],
    turns: Turns | None = None,
) -> tuple[list[Piece], list[Piece]]:
    """The pieces of the next call and the rest. Tenants take turns, one item each per
    turn, the one served longest ago first (a tenant not served yet comes first); each
    tenant's items keep their order. The call closes at ``items`` items or once its
    estimated ``cost`` reaches ``seconds``, and takes at least one item."""
    served = turns.served if turns is not None else {}
    lines: dict[str, list[int]] = {}
    for n, piece in enumerate(pending):
        lines.setdefault(piece.tenant, []).append(n)
    order = sorted(lines, key=lambda t: served.get(t, -1))  # stable: first seen first
    taken: set[int] = set()
    spent = 0.0
    for turn in itertools.count():
        if not any(turn < len(lines[t]) for t in order):
            break
        for tenant in order:
            if turn >= len(lines[tenant]):
                continue
            if taken and (len(taken) >= items or spent >= seconds):
                break
            n = lines[tenant][turn]
            taken.add(n)
            spent += cost(pending[n])
        else:
            continue
        break
    chunk = [pending[n] for n in sorted(taken)]
    rest = [p for n, p in enumerate(pending) if n not in taken]
    if turns is not None:
        turns.took(chunk, rest)
    return chunk, rest


def interleave(jobs: Sequence[EnrichmentJob]) -> list[EnrichmentJob]:
    """``jobs`` a tenant at a time, round after round (tenants in the order they first
    come, each tenant's jobs in their order)."""
    lines: dict[str, list[EnrichmentJob]] = {}
    for job in jobs:
        lines.setdefault(job.tenant, []).append(job)
    rounds = itertools.zip_longest(*lines.values())
    return [job for turn in rounds for job in turn if job is not None]
