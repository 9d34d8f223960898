"""``graphmem import`` and ``graphmem export``: memories as JSONL, through the API.

``sources`` reads what import accepts (graphmem's own export, LoCoMo conversations,
OpenAI-style chats) as records; ``importer`` adds them in batches, resumably;
``exporter`` writes a user's memories and entities.
"""
