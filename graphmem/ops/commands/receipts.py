"""``graphmem receipt verify FILE``: whether an erasure receipt saved as JSON is one this
install's key signed, unchanged (docs/cli.md#graphmem-receipt-verify)."""

from __future__ import annotations

import sys
from pathlib import Path

from graphmem.memory.erasure.receipt import MAX_BYTES, parse, verify
from graphmem.receiptkey import receipt_key
from graphmem.settings import Settings


def verify_file(settings: Settings, file: str) -> int:
    """0 and 'valid', or 1 and why not."""
    try:
        with Path(file).open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        print(f"invalid: cannot read {file}: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        receipt = parse(data)
    except ValueError as exc:
        print(f"invalid: {exc}")
        return 1
    problem = verify(receipt, receipt_key(settings))
    if problem is not None:
        print(f"invalid: {problem}")
        return 1
    print(
        f"valid: receipt {receipt['id']} of tenant {receipt['tenant']}, erased at {receipt['at']}"
    )
    return 0
