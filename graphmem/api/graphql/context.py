"""What every resolver needs from the request: the service, the caller's tenant, and the
optional capabilities, which fail as UNAVAILABLE when not configured."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from graphmem.errors import Unavailable
from graphmem.memory import Memory
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.episodes.memory import EpisodicMemory
from graphmem.memory.kinds.router import MemoryManager


def str_or_none(value: strawberry.ID | None) -> str | None:
    return str(value) if value is not None else None


def id_or_none(value: Any) -> strawberry.ID | None:
    return strawberry.ID(str(value)) if value is not None else None


def service_of(info: Info[Any, Any]) -> tuple[Memory, str]:
    return info.context["service"], info.context["tenant"]


def manager_of(info: Info[Any, Any]) -> tuple[MemoryManager, str]:
    service, tenant = service_of(info)
    if service.manager is None:
        raise Unavailable("the memory-type stores are not configured")
    return service.manager, tenant


def episodes_of(info: Info[Any, Any]) -> tuple[EpisodicMemory, str]:
    service, tenant = service_of(info)
    if service.episodes is None:
        raise Unavailable("episodic memory is not configured")
    return service.episodes, tenant


def entities_of(info: Info[Any, Any]) -> tuple[EntityMemory, str]:
    service, tenant = service_of(info)
    if service.entities is None:
        raise Unavailable("entity memory is switched off (GRAPHMEM_ENTITIES_ENABLED=false)")
    return service.entities, tenant
