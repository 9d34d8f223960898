"""The dates behind English time expressions (``timeexpr.py``): the match a grammar rule
returns, the calendar day, week, month or year holding a date, shifts by whole units, the
thirds and first and last weeks of a period, and the latest instance of a yearly name
(May, summer, Christmas) on or before a date. Spans are half-open ``(start, end)`` dates.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable
from datetime import date, timedelta
from typing import NamedTuple

DAY = timedelta(days=1)

Span = tuple[date, date]
Redo = Callable[[date], Span | None]
Instance = Callable[[int], Span | None]  # a yearly name's instance in a given year


class Match(NamedTuple):
    """A match: dates (date.min / date.max for open bounds) and the next token's index."""

    lo: date
    hi: date
    j: int
    unit: str  # day, week, month, year, season, decade or range: what early/late may split
    redo: Redo | None = None  # a yearless name, as its latest instance on or before a date
    to_now: bool = False  # the end is now itself


OPEN_LO, OPEN_HI = date.min, date.max


def shift(d: date, unit: str, n: int) -> date:
    if unit in ("day", "week"):
        return d + timedelta(days=n * (7 if unit == "week" else 1))
    y, m = divmod(d.month - 1 + n * (12 if unit == "year" else 1), 12)
    y += d.year
    return date(y, m + 1, min(d.day, calendar.monthrange(y, m + 1)[1]))


def unit_of(d: date, unit: str) -> Span:
    """The calendar day, week, month or year containing d."""
    if unit == "day":
        return d, d + DAY
    if unit == "week":
        monday = d - timedelta(days=d.weekday())
        return monday, monday + timedelta(days=7)
    if unit == "month":
        return date(d.year, d.month, 1), date(d.year + d.month // 12, d.month % 12 + 1, 1)
    return date(d.year, 1, 1), date(d.year + 1, 1, 1)


def piece(lo: date, hi: date, unit: str, part: int) -> Span | None:
    """Thirds (0, 1, 2) of a month, year or decade; first and last weeks (3, 4) of the first
    two."""
    if unit == "decade" and part < 3:
        return date(lo.year + (0, 4, 7)[part], 1, 1), date(lo.year + (4, 7, 10)[part], 1, 1)
    if unit not in ("month", "year"):
        return None
    if part >= 3:
        return (lo, lo + timedelta(days=7)) if part == 3 else (hi - timedelta(days=7), hi)
    if unit == "year":
        return shift(lo, "month", 4 * part), shift(lo, "month", 4 * part + 4)
    return lo + timedelta(days=10 * part), hi if part == 2 else lo + timedelta(10 * part + 10)


def day_span(y: int, m: int, d: int) -> Span | None:
    try:
        return date(y, m, d), date(y, m, d) + DAY
    except ValueError:  # 29 February of a common year, 31 April
        return None


def latest_instance(inst: Instance, bound: date, end: int = 0) -> Span | None:
    """The latest instance whose start (or end, with end=1) is on or before bound; eight
    years back reach a 29 February."""
    for y in range(bound.year + 1, bound.year - 9, -1):
        span = inst(y)
        if span is not None and span[end] <= bound:
            return span
    return None


def longest(*matches: Match | None) -> Match | None:
    best = None
    for m in matches:
        if m is not None and (best is None or m.j > best.j):
            best = m
    return best
