"""Checks over a whole JSON value at C speed, for the walks that guard every request.

The checks on what a request carries (nesting, strings the stores cannot hold, numbers
they cannot hold, texts over their limits) walked every node in Python: a 57 KB record
of 4,500 small objects took 35 ms of the event loop's time per walk, three walks a
request, while every other tenant's request waited. Here the value is serialised once
by the C encoder and the answer read from that text with regular expressions and
numpy; a text that might hold a problem (an escaped NUL, a long run of digits, a
string near its limit) is the caller's cue to walk the value for the exact answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

#: a JSON string literal as the encoder writes it (escapes included)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
#: an escape in JSON source that may decode to a NUL or half of a surrogate pair
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
#: 19 digits in a row: the shortest number that may not fit in 64 bits (2**63 has 19)
_LONG_DIGITS = re.compile(r"\d{19}")

_OPEN = np.zeros(256, dtype=np.int8)
_OPEN[[ord("["), ord("{")]] = 1
_OPEN[[ord("]"), ord("}")]] = -1


def dumped(value: Any) -> str | None:
    """``value`` as JSON text (non-ASCII kept as is), or None when it is not plain JSON
    (NaN or an infinity, a type JSON has no word for, nesting past the encoder's
    limit)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return None


def depth(text: str) -> int:
    """How deep containers nest in the JSON ``text`` (0 for a bare scalar)."""
    skeleton = _STRING.sub("", text).encode("ascii", "replace")
    if not skeleton:
        return 0
    steps = _OPEN[np.frombuffer(skeleton, dtype=np.uint8)]
    return int(np.cumsum(steps, dtype=np.int32).max(initial=0))


def plain_texts(text: str) -> bool:
    """No string in ``text`` holds a NUL or a lone surrogate (what UTF-8 stores cannot
    take); False means: perhaps one does."""
    if "\\u0000" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plain_source(source: str) -> bool:
    """No string that the JSON ``source`` (as a client wrote it, read by a strict
    decoder, which refuses raw control characters) decodes to holds a NUL or a lone
    surrogate: those come from ``\\u`` escapes, of which it has none, or from the
    source itself; False means: perhaps one does."""
    return _SUSPECT_ESCAPE.search(source) is None and plain_texts(source)


def small_numbers(text: str) -> bool:
    """Every integer in ``text`` fits in 64 bits; False means: perhaps one does not
    (a long run of digits, which may be inside a string)."""
    return _LONG_DIGITS.search(text) is None


def longest_string(text: str) -> int:
    """At least the length of the longest string or key in ``text`` (escapes count as
    written, so it may be more than the value's, never less)."""
    return max((len(m) - 2 for m in _STRING.findall(text)), default=0)
