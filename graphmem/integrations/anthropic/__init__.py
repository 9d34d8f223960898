"""Claude's memory tool over graphmem: ``pip install 'graphmem[anthropic]'``.

    from anthropic import Anthropic
    from graphmem.integrations.anthropic import GraphmemMemoryTool

    with GraphmemMemoryTool(url, key, session_id="ada.memories", user_id="ada") as memory:
        Anthropic().beta.messages.tool_runner(
            model=..., max_tokens=1024, tools=[memory], messages=[...]
        ).until_done()

Each file under /memories is one graphmem store item (``store.py``); docs/integrations.md.
"""

from graphmem.integrations.anthropic.paths import canonical
from graphmem.integrations.anthropic.tool import AsyncGraphmemMemoryTool, GraphmemMemoryTool

__all__ = ["AsyncGraphmemMemoryTool", "GraphmemMemoryTool", "canonical"]
