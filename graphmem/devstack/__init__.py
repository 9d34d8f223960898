"""The local stack (Neo4j + Redis) that `graphmem services up` runs for development and tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..settings import Settings
from .neo4j import Neo4jLauncher
from .redis import RedisLauncher


@dataclass
class LocalStack:
    settings: Settings
    neo4j: Neo4jLauncher = field(init=False)
    redis: RedisLauncher = field(init=False)

    def __post_init__(self) -> None:
        self.neo4j = Neo4jLauncher(self.settings)
        self.redis = RedisLauncher(self.settings)

    def up(self) -> None:
        self.redis.start()
        self.neo4j.start()

    def down(self) -> None:
        self.neo4j.stop()
        self.redis.stop()

    def status(self) -> list[dict[str, object]]:
        return [self.neo4j.status(), self.redis.status()]

    @property
    def neo4j_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.neo4j_bolt_port}"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.settings.redis_port}/0"


__all__ = ["LocalStack", "Neo4jLauncher", "RedisLauncher"]
