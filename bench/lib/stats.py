"""Percentiles of measured latencies, the same way in every program."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The value at rank ``q`` (0 to 1) of ``values``, nearest rank, no interpolation."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
