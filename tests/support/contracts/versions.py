"""The scope versions' contract (``ScopeVersions``): what search's scope cache relies on
to serve a view only at the version every replica agrees on, and to patch in what changed.

Subclass ``ScopeVersionsContract`` with a fixture ``versions_setup`` returning a
``VersionsSetup``.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphmem.stores import ScopeVersions
from tests.support.contracts.common import unique


@dataclass
class VersionsSetup:
    versions: ScopeVersions
    #: bumps a scope's log remembers
    log_length: int


class ScopeVersionsContract:
    async def test_a_scope_keeps_its_version_until_bumped(
        self, versions_setup: VersionsSetup
    ) -> None:
        versions, tenant = versions_setup.versions, unique()
        first = await versions.read(tenant, "s:1", None)
        assert first.changed is None  # nothing held: read the scope whole
        again = await versions.read(tenant, "s:1", (first.epoch, first.version))
        assert (again.epoch, again.version, again.changed) == (
            first.epoch,
            first.version,
            frozenset(),
        )

    async def test_a_bump_names_the_ids_changed_since_the_version_held(
        self, versions_setup: VersionsSetup
    ) -> None:
        versions, tenant = versions_setup.versions, unique()
        held = await versions.read(tenant, "s:1", None)
        await versions.bump(tenant, {"t": ["a"], "s:1": ["a", "b"]})
        await versions.bump(tenant, {"s:1": ["c"]})
        now = await versions.read(tenant, "s:1", (held.epoch, held.version))
        assert now.epoch == held.epoch and now.version != held.version
        assert now.changed == frozenset({"a", "b", "c"})
        # from the newer version, only what changed after it
        await versions.bump(tenant, {"s:1": ["d"]})
        later = await versions.read(tenant, "s:1", (now.epoch, now.version))
        assert later.changed == frozenset({"d"})

    async def test_an_unknown_change_means_read_it_whole(
        self, versions_setup: VersionsSetup
    ) -> None:
        versions, tenant = versions_setup.versions, unique()
        held = await versions.read(tenant, "u:x", None)
        await versions.bump(tenant, {"u:x": None})
        assert (await versions.read(tenant, "u:x", (held.epoch, held.version))).changed is None
        # everything moves the epoch: every scope of the tenant is read whole
        other = await versions.read(tenant, "s:2", None)
        await versions.bump(tenant, {}, everything=True)
        moved = await versions.read(tenant, "s:2", (other.epoch, other.version))
        assert moved.epoch != other.epoch and moved.changed is None

    async def test_a_log_that_does_not_reach_back_means_read_it_whole(
        self, versions_setup: VersionsSetup
    ) -> None:
        versions, tenant = versions_setup.versions, unique()
        held = await versions.read(tenant, "t", None)
        for n in range(versions_setup.log_length + 1):
            await versions.bump(tenant, {"t": [f"m{n}"]})
        assert (await versions.read(tenant, "t", (held.epoch, held.version))).changed is None

    async def test_scopes_and_tenants_move_apart(self, versions_setup: VersionsSetup) -> None:
        versions, one, two = versions_setup.versions, unique(), unique()
        s1 = await versions.read(one, "s:1", None)
        s2 = await versions.read(one, "s:2", None)
        theirs = await versions.read(two, "s:1", None)
        await versions.bump(one, {"s:1": ["a"]})
        assert (await versions.read(one, "s:2", (s2.epoch, s2.version))).changed == frozenset()
        assert (await versions.read(two, "s:1", (theirs.epoch, theirs.version))).changed == (
            frozenset()
        )
        assert (await versions.read(one, "s:1", (s1.epoch, s1.version))).changed == frozenset({"a"})
        await versions.bump(two, {}, everything=True)
        assert (await versions.read(one, "s:2", (s2.epoch, s2.version))).changed == frozenset()
