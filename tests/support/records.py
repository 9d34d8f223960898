"""Record schemas that make validation blow up, values to check against them, and a way
to see whether any validation is still running."""

from __future__ import annotations

import sys
import threading
import traceback
from typing import Any

#: the finding: definitions that recurse through both branches of an anyOf, so a value
#: is checked 2^depth times
HOSTILE = {
    "$defs": {
        "n": {
            "anyOf": [
                {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["zz"]},
                {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}},
            ]
        }
    },
    "properties": {"a": {"$ref": "#/$defs/n"}},
}


def chain(links: int) -> dict[str, Any]:
    """A shape the registration check lets through (each definition recurses on one path
    and hands over to the next), whose check still grows as depth^links: only the budget
    stops it."""
    defs: dict[str, Any] = {}
    for i in range(links):
        node: dict[str, Any] = {"properties": {"a": {"$ref": f"#/$defs/c{i}"}}}
        if i + 1 < links:
            node["allOf"] = [{"$ref": f"#/$defs/c{i + 1}"}]
        defs[f"c{i}"] = node
    return {"type": "object", "$defs": defs, "$ref": "#/$defs/c0"}


def nest(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def threads_validating() -> list[str]:
    """Threads other than this one with a jsonschema frame on their stack."""
    me = threading.get_ident()
    return [
        str(tid)
        for tid, frame in sys._current_frames().items()
        if tid != me
        and any("jsonschema" in f.f_code.co_filename for f, _ in traceback.walk_stack(frame))
    ]
