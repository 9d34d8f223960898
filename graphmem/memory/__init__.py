"""Memory: the capabilities of graphmem, one module each, held by one small facade.

    memory = MemoryBuilder.from_settings(settings).build()
    item = await memory.ingest.add(tenant, {"sessionId": "s1", "content": "..."})
    await memory.spills.spill(tenant, "s1")
    result = await memory.recall.recall(tenant, RecallQuery(session_id="s1", query="..."))

Data flows one way: the API calls a capability, a capability calls the stores
(``graphmem.stores``), the stores run the named Cypher files. Every capability method
takes the tenant first; nothing here crosses tenants.
"""

from graphmem.memory.facade import Memory
from graphmem.memory.inputs import AddMemory, Limits, RecallQuery
from graphmem.memory.tiers.maintenance import MaintenanceReport

__all__ = ["AddMemory", "Limits", "MaintenanceReport", "Memory", "RecallQuery"]
