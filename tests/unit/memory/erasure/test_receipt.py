"""Receipts: signed over their canonical form, so a receipt verifies with the key that
signed it and fails at any one changed byte, or with another key, saying why."""

from __future__ import annotations

from typing import Any

from graphmem.memory.erasure.receipt import VERSION, canonical, parse, sign, verify

KEY = b"k" * 32


def body() -> dict[str, Any]:
    return {
        "version": VERSION,
        "id": "rcpt_0123",
        "tenant": "t-a",
        "subject": {"kind": "user", "userId": "ada"},
        "at": "2025-01-02T03:04:05+00:00",
        "completedAt": "2025-01-02T03:04:06+00:00",
        "removed": {"redis.hotItems": 3, "neo4j.nodes": {"Memory": 12, "Entity": 2}},
        "verification": {"found": {"redis.hotItems": 0, "neo4j.Memory": 0}, "clean": True},
    }


def test_a_signed_receipt_verifies_with_its_key_only() -> None:
    receipt = sign(body(), KEY)
    assert verify(receipt, KEY) is None
    assert verify(parse(canonical(receipt)), KEY) is None
    problem = verify(receipt, b"x" * 32)
    assert problem is not None and "another key" in problem


def test_every_single_changed_byte_of_a_saved_receipt_fails() -> None:
    saved = canonical(sign(body(), KEY))
    for position in range(len(saved)):
        for replacement in {ord("0"), ord("a"), ord("}"), saved[position] ^ 1} - {saved[position]}:
            changed = bytearray(saved)
            changed[position] = replacement
            try:
                receipt = parse(bytes(changed))
            except ValueError:
                continue  # no longer JSON: refused
            assert verify(receipt, KEY) is not None, (position, bytes(changed))


def test_a_receipt_missing_its_parts_or_of_another_version_is_refused() -> None:
    receipt = sign(body(), KEY)
    assert "no signature" in str(
        verify({k: v for k, v in receipt.items() if k != "signature"}, KEY)
    )
    assert "version" in str(verify({**receipt, "version": 99}, KEY))
    assert verify([receipt], KEY) == "a receipt is a JSON object"
    assert "signature" in str(verify({**receipt, "signature": "abc"}, KEY))
