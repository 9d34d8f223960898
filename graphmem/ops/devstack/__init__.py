"""The local stack (Neo4j + Redis) that `graphmem services up` runs for development and tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from graphmem.ops.devstack.cluster import RedisClusterLauncher
from graphmem.ops.devstack.neo4j import Neo4jLauncher
from graphmem.ops.devstack.redis import RedisLauncher
from graphmem.settings import Settings


@dataclass
class LocalStack:
    """Neo4j and either a single Redis or (``redis_cluster``) a local Redis Cluster."""

    settings: Settings
    redis_cluster: bool = False
    neo4j: Neo4jLauncher = field(init=False)
    redis: RedisLauncher = field(init=False)
    cluster: RedisClusterLauncher = field(init=False)

    def __post_init__(self) -> None:
        self.neo4j = Neo4jLauncher(self.settings)
        self.redis = RedisLauncher(self.settings)
        self.cluster = RedisClusterLauncher(self.settings)

    def up(self) -> None:
        if self.redis_cluster:
            self.cluster.start()
        else:
            self.redis.start()
        self.neo4j.start()

    def down(self) -> None:
        """Stops whatever of the stack runs (a cluster started by an earlier ``up`` too)."""
        self.neo4j.stop()
        self.redis.stop()
        self.cluster.stop()

    def status(self) -> list[dict[str, object]]:
        redis = self.cluster.status() if self.redis_cluster else self.redis.status()
        return [self.neo4j.status(), redis]

    @property
    def neo4j_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.neo4j_bolt_port}"

    @property
    def redis_url(self) -> str:
        if self.redis_cluster:
            return self.cluster.url
        return f"redis://127.0.0.1:{self.settings.redis_port}/0"


__all__ = ["LocalStack", "Neo4jLauncher", "RedisClusterLauncher", "RedisLauncher"]
