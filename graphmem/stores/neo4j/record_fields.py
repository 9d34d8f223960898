"""How a record's top-level fields are stored for queries: as tokens in one property.

One property per field (``f_<name>``) made every field name a tenant chose a property
key of the whole database, which Neo4j never reclaims: one record with a hundred new
keys grew the database's table of property keys by a hundred, for every tenant. A
record now carries a fixed set of properties; its queryable fields are the list
``fields`` of tokens, each the JSON text of ``[name, kind, value]``, and a query asks
for its tokens to be in that list. Tokens compare values as the property comparison
did: 2 equals 2.0, but true is not 1 and "2" is not 2.
"""

from __future__ import annotations

import json
from typing import Any

from graphmem.stores.neo4j.session import Neo4jSession

MIGRATION = "record-field-tokens"


def token(name: str, value: str | int | float | bool) -> str:
    """The token of one field (a string, a boolean, a 64-bit integer or a finite float)."""
    if isinstance(value, bool):
        kind, text = "b", "true" if value else "false"
    elif isinstance(value, int):
        kind, text = "n", str(value)
    elif isinstance(value, float):
        kind, text = "n", str(int(value)) if value.is_integer() else repr(value)
    else:
        kind, text = "s", value
    return json.dumps([name, kind, text], ensure_ascii=False)


def tokens(fields: dict[str, Any]) -> list[str]:
    return [token(name, value) for name, value in fields.items()]


def _stored_fields(data: Any) -> list[str]:
    """The tokens of a record stored as JSON text: its top-level scalar fields, as
    ``MemoryManager.add_record`` chose them (numbers past 64 bits were refused)."""
    try:
        record = json.loads(data)
    except (TypeError, ValueError):
        return []  # unreadable: no fields, but migrated (the backfill must end)
    if not isinstance(record, dict):
        return []
    return tokens({k: v for k, v in record.items() if isinstance(v, str | int | float)})


async def backfill(session: Neo4jSession, batch: int = 1000) -> int:
    """Give records stored with one property per field their ``fields`` tokens, and drop
    those properties; how many it rewrote."""
    done = 0
    for row in await session.run("admin/record_tenants", {}):
        tenant = row["tenant"]
        params = {"tenant": tenant, "batch": batch}
        while rows := await session.run("record/fields_missing", params):
            updates = [{"id": r["id"], "fields": _stored_fields(r["data"])} for r in rows]
            await session.run("record/fields_set", {"tenant": tenant, "rows": updates})
            done += len(updates)
    return done
