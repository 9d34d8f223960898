"""One model per tenant: a tenant's vectors are all one model's (the one its first vectors
came from, or the one `graphmem reembed` moved it to), and a process embedding with
another model neither searches them nor adds its own (docs/recall.md, "One model per
tenant").

The graph enforces the writes (memory/upsert_batch and memory/set_vectors write no
vectors of another model than the tenant's). This module is the read side: search asks
``require`` before it embeds a query, and a server says at start, in one line, which
tenants it cannot search.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from graphmem.domain.models import EmbeddingSpace
from graphmem.errors import Unavailable
from graphmem.stores import GraphSpaces


class TenantSpaces:
    #: how long this process trusts what it read of a tenant's model: a reembed's flip
    #: reaches every replica's searches within it
    ttl_seconds = 5.0
    #: tenants remembered at most
    size = 10_000

    def __init__(self, store: GraphSpaces, space: EmbeddingSpace) -> None:
        self.store = store
        self.space = space
        self._seen: OrderedDict[str, tuple[float, str | None]] = OrderedDict()

    async def model_of(self, tenant: str) -> str | None:
        """The model of the tenant's vectors (None: it has none yet)."""
        now = time.monotonic()
        found = self._seen.get(tenant)
        if found is not None and now - found[0] < self.ttl_seconds:
            self._seen.move_to_end(tenant)
            return found[1]
        model = await self.store.of(tenant)
        self._seen[tenant] = (now, model)
        self._seen.move_to_end(tenant)
        if len(self._seen) > self.size:
            self._seen.popitem(last=False)
        return model

    async def require(self, tenant: str) -> None:
        """Raise UNAVAILABLE when the tenant's vectors are another model's than this
        process embeds queries with: a ranking across two models' vectors is noise."""
        model = await self.model_of(tenant)
        if model is not None and model != self.space.model:
            raise Unavailable(
                f"this tenant's memories are embedded by {model}; this server embeds "
                f"with {self.space.model}: search answers again once its servers run "
                f"{model}, or once `graphmem reembed` has moved the tenant to "
                f"{self.space.model}",
                tenantModel=model,
                serverModel=self.space.model,
            )

    async def report(self) -> str | None:
        """One line naming the tenants whose vectors are another model's, or None."""
        others = {t: m for t, m in (await self.store.all()).items() if m != self.space.model}
        if not others:
            return None
        models = sorted(set(others.values()))
        shown = ", ".join(sorted(others)[:5]) + (" ..." if len(others) > 5 else "")
        return (
            f"{len(others)} tenant(s) ({shown}) hold vectors of {', '.join(models)}, not of "
            f"{self.space.model} this process embeds with: their searches answer "
            f"UNAVAILABLE and no vectors are written for them here until `graphmem reembed "
            f"--all` (with GRAPHMEM_EMBEDDER set to this model) has moved them"
        )
