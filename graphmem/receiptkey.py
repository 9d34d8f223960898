"""The key erasure receipts are signed with (docs/configuration.md#erasure).

``GRAPHMEM_RECEIPT_KEY`` when set. Unset, the install gets a key of its own on first
use, as a development install gets its API key: random, kept in ``<home>/receipt-key``
with mode 0600, read by the server, its workers and ``graphmem receipt verify`` alike.
Refusing to start without the setting would have broken every install that upgrades; a
deployment whose replicas do not share ``home`` must set the key, so that a receipt one
replica signed verifies on another (docs/configuration.md says so).
"""

from __future__ import annotations

import secrets

from graphmem.settings import Settings


def receipt_key(settings: Settings) -> bytes:
    if settings.receipt_key is not None:
        return settings.receipt_key.get_secret_value().encode("utf-8")
    path = settings.receipt_key_file
    if path.is_file():
        key = path.read_text(encoding="utf-8").strip()
        if key:
            return key.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(48)
    path.write_text(key + "\n", encoding="utf-8")
    path.chmod(0o600)
    return key.encode("utf-8")
