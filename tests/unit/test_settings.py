from __future__ import annotations

from pathlib import Path

import pytest

from graphmem.errors import ConfigurationError
from graphmem.settings import MemoryConfig, Settings, load_settings, parse_api_keys


def test_memory_config_defaults_are_the_documented_tier_settings() -> None:
    c = MemoryConfig()
    assert (c.hot_token_limit, c.warm_access_threshold, c.promote_threshold, c.max_cold_items) == (
        4000,
        3,
        0.85,
        1000,
    )
    assert c.auto_spill_enabled and c.auto_promote_enabled


def test_memory_config_accepts_both_naming_styles() -> None:
    c = MemoryConfig().merged(hotTokenLimit=100, warm_access_threshold=5)
    assert (c.hot_token_limit, c.warm_access_threshold) == (100, 5)
    with pytest.raises(ValueError):
        MemoryConfig().merged(promoteThreshold=1.5)
    with pytest.raises(ValueError):
        MemoryConfig().merged(noSuchSetting=1)


def test_api_keys_parse_and_validate() -> None:
    assert parse_api_keys("key-aaaaaaaa=acme, key-bbbbbbbb=globex") == {
        "key-aaaaaaaa": "acme",
        "key-bbbbbbbb": "globex",
    }
    assert parse_api_keys("") == {}
    for bad in ("no-equals-sign", "short=acme", "key-aaaaaaaa=bad tenant", "key-aaaaaaaa=a:b"):
        with pytest.raises(ConfigurationError):
            parse_api_keys(bad)


def test_environment_and_yaml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    yaml_file = tmp_path / "graphmem.yaml"
    yaml_file.write_text(
        "neo4j_uri: bolt://yaml:7687\n"
        "api_keys:\n  key-yyyyyyyy: yaml-tenant\n"
        "memory:\n  hotTokenLimit: 1234\n  promoteThreshold: 0.9\n"
    )
    monkeypatch.setenv("GRAPHMEM_CONFIG", str(yaml_file))
    for var in ("NEO4J_URI", "REDIS_URL", "GRAPHMEM_API_KEYS"):
        monkeypatch.delenv(var, raising=False)
    s = load_settings()
    assert s.resolved_neo4j_uri == "bolt://yaml:7687"
    assert s.api_keys == {"key-yyyyyyyy": "yaml-tenant"}
    assert s.memory.hot_token_limit == 1234
    assert s.memory.promote_threshold == 0.9
    # the environment wins over the file
    monkeypatch.setenv("NEO4J_URI", "bolt://env:7687")
    monkeypatch.setenv("GRAPHMEM_API_KEYS", "key-eeeeeeee=env-tenant")
    monkeypatch.setenv("GRAPHMEM_MEMORY__HOT_TOKEN_LIMIT", "777")
    s = load_settings()
    assert s.resolved_neo4j_uri == "bolt://env:7687"
    assert s.api_keys == {"key-eeeeeeee": "env-tenant"}
    assert s.memory.hot_token_limit == 777


def test_invalid_settings_are_configuration_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_PORT", "not-a-port")
    with pytest.raises(ConfigurationError):
        load_settings()


def test_defaults_point_at_the_local_stack() -> None:
    s = Settings.model_construct()
    assert s.resolved_neo4j_uri == "bolt://127.0.0.1:7687"
    assert s.resolved_redis_url == "redis://127.0.0.1:6379/0"


def test_configured_aliases_resolve_for_every_tenant_and_tenant_aliases_win() -> None:
    from graphmem.memory.entities.memory import Resolver
    from graphmem.stores.models import AliasRule

    resolver = Resolver([], {"NYC": "New York City", "The Big Apple": "New York City"})
    assert resolver.resolve("NYC", "PLACE") == ("PLACE|new york city", "alias")
    assert resolver.resolve("the big apple", "PLACE") == ("PLACE|new york city", "alias")
    assert resolver.resolve("The Eiffel Tower's", "PLACE") == ("PLACE|eiffel tower", "normalised")
    assert resolver.resolve("eiffel tower", "PLACE") == ("PLACE|eiffel tower", "exact")
    tenant = Resolver(
        [AliasRule(alias="nyc", canonical="PLACE|nyc city hall", kind="alias")],
        {"NYC": "New York City"},
    )
    assert tenant.resolve("NYC", "ORGANIZATION") == ("PLACE|nyc city hall", "alias")
