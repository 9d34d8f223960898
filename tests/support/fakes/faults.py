"""Failures a test plans for a fake's operations, and the calls each operation got."""

from __future__ import annotations

from collections import Counter


class Faults:
    def __init__(self) -> None:
        self._planned: dict[str, list[BaseException | None]] = {}
        #: how many times each operation was called (failed calls included)
        self.calls: Counter[str] = Counter()

    def plan(self, operation: str, error: BaseException, times: int = 1, after: int = 0) -> None:
        """The ``times`` calls of ``operation`` that follow the next ``after`` raise ``error``
        before doing anything."""
        planned = self._planned.setdefault(operation, [])
        planned.extend([None] * after + [error] * times)

    def check(self, operation: str) -> None:
        self.calls[operation] += 1
        planned = self._planned.get(operation)
        if planned and (error := planned.pop(0)) is not None:
            raise error
