"""In-memory stores that meet the store protocols (``graphmem.stores``) as far as the
capabilities under unit test use them; ``tests/support/contracts`` holds what they share
with the real stores."""
