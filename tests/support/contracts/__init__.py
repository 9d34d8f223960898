"""What every implementation of a store protocol must do, as tests run against both the
in-memory fakes and the real Redis and Neo4j stores."""
