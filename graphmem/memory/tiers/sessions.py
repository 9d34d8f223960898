"""Per-session settings (defaults with stored overrides) and the per-session lock that
keeps a spill, a flush, a forget and an enrichment worker's write of one session from
interleaving."""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager
from typing import Any

from pydantic import ValidationError

from graphmem.errors import BadInput
from graphmem.memory.inputs import Inputs, bad_input
from graphmem.settings import SESSION_OVERRIDABLE, MemoryConfig
from graphmem.stores import HotTier

log = logging.getLogger("graphmem.memory")


class Sessions:
    def __init__(self, hot: HotTier, config: MemoryConfig) -> None:
        self.hot = hot
        self.defaults = config

    def effective(self, overrides: dict[str, Any]) -> MemoryConfig:
        if not overrides:
            return self.defaults
        try:
            return self.defaults.merged(**overrides)
        except ValueError:  # stored overrides that no longer validate fall back to defaults
            log.warning("ignoring invalid session overrides %s", overrides)
            return self.defaults

    async def config(self, tenant: str, session_id: str) -> MemoryConfig:
        Inputs.scope(session_id, None)
        return self.effective(await self.hot.index.session_config(tenant, session_id))

    async def configure(
        self, tenant: str, session_id: str, overrides: dict[str, Any]
    ) -> MemoryConfig:
        """Override the tier settings for one session; ``None`` values reset a setting."""
        Inputs.scope(session_id, None)
        current = await self.hot.index.session_config(tenant, session_id)
        names = {f.alias: n for n, f in MemoryConfig.model_fields.items() if f.alias}
        for key, value in overrides.items():
            name = names.get(key, key)
            if name not in SESSION_OVERRIDABLE:
                raise BadInput(f"{key}: cannot be set per session", field=key)
            if value is None:
                current.pop(name, None)
            else:
                current[name] = value
        try:
            effective = self.defaults.merged(**current)
        except ValidationError as exc:
            raise bad_input(exc) from exc
        except ValueError as exc:
            raise BadInput(f"invalid session settings: {exc}") from exc
        await self.hot.index.set_session_config(tenant, session_id, current)
        return effective

    def lock(self, tenant: str, session_id: str) -> AbstractAsyncContextManager[None]:
        """Held across processes (in Redis): API replicas and enrichment workers share it."""
        return self.hot.locks.hold(tenant, session_id)
