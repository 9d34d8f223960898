"""API keys → tenants: the configured keys, or a development key for tenant 'dev' when none
are configured. The API's middleware (``api/http/auth.py``) and the tools that act as a
tenant (notebooks' analytics, the command line) resolve keys here alike."""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

from graphmem.settings import Settings

DEV_TENANT = "dev"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def dev_key(path: Path) -> str:
    """The local development key, created on first use (mode 0600)."""
    if path.is_file():
        key = path.read_text(encoding="utf-8").strip()
        if key:
            return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = f"gm_dev_{secrets.token_urlsafe(24)}"
    path.write_text(key + "\n", encoding="utf-8")
    path.chmod(0o600)
    return key


def api_keys(settings: Settings) -> dict[str, str]:
    """Configured keys, or the dev key for tenant 'dev' when none are configured."""
    if settings.api_keys:
        return dict(settings.api_keys)
    return {dev_key(settings.dev_key_file): DEV_TENANT}


class KeyRing:
    """Looks keys up by digest, so lookup time does not depend on how much of a key matches."""

    def __init__(self, keys: dict[str, str]) -> None:
        self._tenants = {_digest(k): t for k, t in keys.items()}

    def tenant(self, authorization: str | None) -> str | None:
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self._tenants.get(_digest(token.strip()))
