"""Which admitted items the enrichment worker (``worker.py``) embeds, or reads for
entities, next: a call of about ``seconds`` of estimated work, shared between the
tenants by work, not by items.

A call's length is what another tenant's new memory waits for, so calls are cut by their
estimated cost, not by their number of items: one tenant's long memories (20 KB of text
takes a tenth of a second to embed and up to two seconds of NER) fill a call in a few
items, and the next call has room for everyone else's. Within and across calls the
tenant given the least work so far goes next (``Turns``): a tenant adding two short
memories a second beside another tenant's stream of long ones gets dozens of its own
for each of theirs, not one. The estimate is a rate per character (``CostRate``),
learned from the calls the worker has made.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from graphmem.domain.models import MemoryItem
from graphmem.enrich.sentences import Embedded
from graphmem.stores.models import EnrichmentJob

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
    """What each waiting tenant has been given so far, in estimated seconds (relative to
    the least served of them): the tenant given least goes next, so each gets an equal
    share of the work, not of the items. A tenant with nothing waiting is forgotten and
    comes back level with the least served (it banks no credit while away)."""

    given: dict[str, float] = field(default_factory=dict)


def next_call(
    pending: Sequence[Piece],
    items: int,
    seconds: float,
    cost: Callable[[Piece], float],
    turns: Turns | None = None,
) -> tuple[list[Piece], list[Piece]]:
    """The pieces of the next call and the rest. Item by item, the tenant that will have
    been given the least estimated work once its next item is done goes next (ties: the
    one first in ``pending``); each tenant's items keep their order. So a tenant of short
    memories gets many of them for one of another tenant's long ones, and a short memory
    of a tenant level with another goes before that tenant's long one. The call closes at
    ``items`` items, once its estimated ``cost`` reaches ``seconds``, or before an item
    that would take it past ``seconds``: every item of a call waits for the whole call,
    so a short memory never rides with another tenant's long one (measured: C's memories
    waited 1 to 2 s in calls beside one of B's 20 KB ones). A call takes at least one
    item."""
    lines: dict[str, list[int]] = {}
    for n, piece in enumerate(pending):
        lines.setdefault(piece.tenant, []).append(n)
    known = turns.given if turns is not None else {}
    level = min((known[t] for t in lines if t in known), default=0.0)
    given = {t: max(known.get(t, level), level) for t in lines}
    next_of = dict.fromkeys(lines, 0)

    def turn(rank: int, tenant: str) -> tuple[float, float, int, str]:
        price = cost(pending[lines[tenant][next_of[tenant]]])
        return given[tenant] + price, price, rank, tenant

    queue = [turn(rank, t) for rank, t in enumerate(lines)]
    heapq.heapify(queue)
    taken: list[int] = []
    spent = 0.0
    while queue and not (taken and (len(taken) >= items or spent >= seconds)):
        _, price, rank, tenant = queue[0]
        if taken and spent + price > seconds + 1e-9:  # (sums of float costs)
            break
        heapq.heappop(queue)
        taken.append(lines[tenant][next_of[tenant]])
        next_of[tenant] += 1
        spent += price
        given[tenant] += price
        if next_of[tenant] < len(lines[tenant]):
            heapq.heappush(queue, turn(rank, tenant))
    chosen = set(taken)
    chunk = [pending[n] for n in sorted(chosen)]
    rest = [p for n, p in enumerate(pending) if n not in chosen]
    if turns is not None:
        waiting = {t: given[t] for t in lines if next_of[t] < len(lines[t])}
        low = min(waiting.values(), default=0.0)
        turns.given = {t: g - low for t, g in waiting.items()}
    return chunk, rest
