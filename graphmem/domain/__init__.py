"""The domain: models shared by every layer, with no I/O and no NLP."""
