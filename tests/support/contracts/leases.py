"""The leases' contract (``Leases``): maintenance runs in one replica at a time, the one
holding the lease, and another takes over once it lapses.

Subclass ``LeasesContract`` with a fixture ``leases_setup`` returning a ``LeasesSetup``.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphmem.stores import Leases
from tests.support.contracts.common import Elapse, unique


@dataclass
class LeasesSetup:
    leases: Leases
    elapse: Elapse


class LeasesContract:
    async def test_one_holder_at_a_time(self, leases_setup: LeasesSetup) -> None:
        leases, name = leases_setup.leases, unique("lease")
        assert await leases.holder(name) is None
        assert await leases.hold(name, "a", 30) is True
        assert await leases.hold(name, "a", 30) is True  # renewed
        assert await leases.hold(name, "b", 30) is False
        assert await leases.holder(name) == "a"
        await leases.release(name, "b")  # not b's to release
        assert await leases.holder(name) == "a"
        await leases.release(name, "a")
        assert await leases.holder(name) is None
        assert await leases.hold(name, "b", 30) is True

    async def test_a_lease_not_renewed_lapses(self, leases_setup: LeasesSetup) -> None:
        leases, name = leases_setup.leases, unique("lease")
        assert await leases.hold(name, "a", 0.2) is True
        await leases_setup.elapse(0.3)
        assert await leases.holder(name) is None
        assert await leases.hold(name, "b", 30) is True
        assert await leases.holder(name) == "b"
