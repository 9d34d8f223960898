"""Erasure receipts: what a forget removed from each place graphmem keeps data, what a
second look at each place found afterwards, signed with HMAC-SHA256 over a canonical JSON
form (docs/concepts.md#erasure). Pure functions, no I/O: the server signs with them and
``graphmem receipt verify`` checks with them.

The canonical form is the receipt without its ``signature``, as JSON with sorted keys, no
whitespace and UTF-8 text: two receipts that mean the same sign the same, and a receipt
saved as ``canonical(receipt)`` (how the server hands it out) turns invalid at any one
changed byte, since that either breaks the JSON or changes a value the signature covers.
A receipt names ids and counts, never the content erased.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

#: the version of the receipt's form; a verifier refuses versions it does not know
VERSION = 1
ALGORITHM = "HMAC-SHA256"
#: the largest receipt a verifier or an import reads, in bytes (ids of 500 memories and
#: the counts fit in well under this)
MAX_BYTES = 256 * 1024
_FIELDS = ("version", "id", "tenant", "subject", "at", "completedAt", "removed", "verification")


def canonical(body: dict[str, Any]) -> bytes:
    return json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def key_id(key: bytes) -> str:
    """Names the key a receipt was signed with, without revealing it: a verifier with
    another key says so instead of only 'invalid'."""
    return hashlib.sha256(b"graphmem-receipt-key:" + key).hexdigest()[:16]


def _mac(body: dict[str, Any], key: bytes) -> str:
    return hmac.new(key, canonical(body), hashlib.sha256).hexdigest()


def sign(body: dict[str, Any], key: bytes) -> dict[str, Any]:
    """``body`` with its signature (over everything else, the key's id included)."""
    unsigned = {**body, "keyId": key_id(key)}
    return {**unsigned, "signature": {"algorithm": ALGORITHM, "value": _mac(unsigned, key)}}


def verify(receipt: Any, key: bytes) -> str | None:
    """None when ``receipt`` is one this key signed and unchanged since; else why not."""
    if not isinstance(receipt, dict):
        return "a receipt is a JSON object"
    missing = [f for f in (*_FIELDS, "keyId", "signature") if f not in receipt]
    if missing:
        return "not a receipt: no " + ", ".join(missing)
    if receipt["version"] != VERSION:
        return f"receipt version {receipt['version']!r} is not one this graphmem reads"
    signature = receipt["signature"]
    if (
        not isinstance(signature, dict)
        or set(signature) != {"algorithm", "value"}
        or signature["algorithm"] != ALGORITHM
        or not isinstance(signature["value"], str)
    ):
        return f"the signature is not an {ALGORITHM} signature"
    unsigned = {k: v for k, v in receipt.items() if k != "signature"}
    try:
        expected = _mac(unsigned, key)
    except ValueError:
        return "the receipt holds a value JSON cannot carry"
    if not hmac.compare_digest(expected, signature["value"]):
        if receipt["keyId"] != key_id(key):
            return (
                f"signed with another key (key id {receipt['keyId']}, this one is "
                f"{key_id(key)}), or changed"
            )
        return "the signature does not match: the receipt was changed after it was signed"
    return None


def parse(data: bytes) -> Any:
    """A receipt file's JSON, bounded; raises ValueError with the reason."""
    if len(data) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES} bytes: not a receipt")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ValueError("nested too deeply: not a receipt") from None
