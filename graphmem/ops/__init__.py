"""Operating graphmem: the command line, doctor, notebooks' analytics, the allocator
setting and the local development stack."""
