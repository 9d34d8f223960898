"""The rows of LangGraph store items (``stores/neo4j/items.py``, ``memory/kinds/items``)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from graphmem.stores.models import StoreModel


class StoredItem(StoreModel):
    """A LangGraph store item (memory/kinds/items): its namespace path (labels joined
    by '.', with a trailing '.'), key, value as JSON text, and a search score."""

    path: str
    key: str
    value: str
    created_at: datetime
    updated_at: datetime
    score: float | None = None


class ItemWrite(StoreModel):
    """One put (``value`` JSON text) or delete (``value`` None) of a store item, with
    what search ranks it by (``text``, ``scope`` tokens, ``embedding``; None when the
    item is kept out of query searches)."""

    path: str
    key: str
    value: str | None
    text: str | None = None
    scope: str | None = None
    embedding: list[float] | None = None
    model: str | None = None
    user_id: str | None = None
    #: the vector is set after the put answers (``text`` non-empty, no ``embedding``)
    vector_due: bool = False
    #: an imported version's times: kept, and it never replaces a version as new or newer
    created_at: datetime | None = None
    updated_at: datetime | None = None


class ItemText(StoreModel):
    """A store item's text to embed (its first ``MAX_EMBEDDED`` characters)."""

    path: str
    key: str
    text: str


class ItemVector(ItemText):
    """The vector of ``text``, for the item if it still holds that text."""

    embedding: list[float]


class ItemTextHits(StoreModel):
    """What a query search reads beside its query's embedding (``ItemStore.text_hits``):
    the best items by Lucene's BM25, each with its text, and the items whose vector is
    still due, with their text."""

    #: scored by Lucene, best first; ``texts[i]`` is ``hits[i]``'s (its first characters)
    hits: list[StoredItem] = Field(default_factory=list)
    texts: list[str] = Field(default_factory=list)
    #: vector due: the item and the text to embed
    due: list[tuple[StoredItem, str]] = Field(default_factory=list)
    #: due items Lucene does not hold yet (a new item until its vector is set), with
    #: their whole text: the search scores them by BM25 itself
    unindexed: list[tuple[StoredItem, str]] = Field(default_factory=list)
