"""The point-in-time arguments of every read of memories and entities (docs/concepts.md,
"Two clocks"; ``domain/moments.py``)."""

from __future__ import annotations

from datetime import datetime

AS_OF = (
    "Record time: what graphmem held at this moment (memories recorded by then and not "
    "retracted then; relations recorded and not closed by then). Default: now."
)
VALID_AT = (
    "Valid time: what was true at this moment (memories that had happened by then; "
    "relations with validFrom <= validAt < validUntil). Default: any time."
)
HISTORY = "Also retracted memories and closed relations (none recorded after asOf)."
# Plain on arguments: a described argument spreads the whole field's SDL over lines
# (docs/api.md documents them)
AsOf = datetime | None
ValidAt = datetime | None
IncludeHistory = bool
