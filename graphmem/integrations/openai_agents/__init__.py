"""The OpenAI Agents SDK's ``Session`` over graphmem: ``pip install 'graphmem[openai-agents]'``.

    from agents import Agent, Runner
    from graphmem.integrations.openai_agents import GraphmemSession

    session = GraphmemSession("chat-42", url, key, user_id="ada")
    await Runner.run(Agent(name="helper"), "Hi, I'm Ada", session=session)

Each item is one graphmem memory (``items.py``); docs/integrations.md.
"""

from graphmem.integrations.openai_agents.items import ItemError, session_of, text_of
from graphmem.integrations.openai_agents.session import GraphmemSession

__all__ = ["GraphmemSession", "ItemError", "session_of", "text_of"]
