"""The other memory types and the router over all of them: working memory, conversation
history, personas and structured records."""
