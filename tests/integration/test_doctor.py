"""`graphmem doctor` against the real stack: all green, then a wrong user named as such."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT, Stack, stack_env


def doctor(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphmem.ops.cli", "doctor"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_doctor_passes_on_the_stack_and_names_wrong_credentials(stack: Stack) -> None:
    env = stack_env(stack, GRAPHMEM_API_KEYS="doctor-key-1=t-doctor")
    fine = doctor(env)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    rows = fine.stdout.splitlines()
    assert all(row.startswith("ok") for row in rows[:-1]), fine.stdout
    assert {row.split()[1] for row in rows[:-1]} >= {"neo4j", "redis", "keys", "embedder"}
    assert "1 key(s) for tenants t-doctor" in fine.stdout

    # A user of its own: Neo4j locks a user out after failed logins, never this stack's.
    wrong = doctor(env | {"NEO4J_USER": "doctor-nobody"})
    assert wrong.returncode == 1
    neo4j = next(row for row in wrong.stdout.splitlines() if row.split()[1] == "neo4j")
    assert neo4j.startswith("FAIL")
    assert "refused user 'doctor-nobody': check NEO4J_USER and NEO4J_PASSWORD" in neo4j


def test_doctor_names_a_redis_cluster_setting_that_does_not_match(stack: Stack) -> None:
    flipped = "false" if stack.redis_cluster else "true"
    wrong = doctor(stack_env(stack, REDIS_CLUSTER=flipped, GRAPHMEM_API_KEYS="doctor-key-1=t"))
    redis = next(row for row in wrong.stdout.splitlines() if row.split()[1] == "redis")
    assert redis.startswith("FAIL"), wrong.stdout
    assert ("unset REDIS_CLUSTER" if flipped == "true" else "set REDIS_CLUSTER=true") in redis
