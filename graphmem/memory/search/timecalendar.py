"""The calendar rules of English time expressions (``timeexpr.py``): ISO dates, day and
month ("7 May 2023", "May 7th"), months and years ("May 2023", "the year 2019"),
seasons, holidays, decades ("the 90s") and weekdays, and the instance of a yearly name
(May, summer, Christmas) that "this", "last" or "next" or no word at all picks. Each rule
takes a token index and returns a match or None.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import partial

from graphmem.memory.search.timespans import (
    DAY,
    Instance,
    Match,
    Span,
    day_span,
    latest_instance,
    longest,
    shift,
    unit_of,
)
from graphmem.memory.search.timewords import SEASONS, WEEKDAYS, Tokens


class CalendarRules(Tokens):
    """Dates and names on the calendar."""

    def iso(self, i: int) -> Match | None:
        if self.c(i) != "I":
            return None
        span = day_span(*map(int, self.words[i].split("-")))
        return Match(*span, i + 1, "day") if span else None

    def name(self, j: int) -> tuple[Instance, int, str] | None:
        """A month, season or holiday name at j: its instance in a given year."""
        month = self.month(j)
        if month is not None:
            m = month[0]
            return (lambda y: unit_of(date(y, m, 1), "month")), month[1], "month"
        if self.w(j) in SEASONS:
            s = SEASONS[self.w(j)]
            return (lambda y: (date(y, s, 1), shift(date(y, s, 1), "month", 3))), j + 1, "season"
        holiday = self.holiday(j)
        if holiday is not None:
            (hm, hd), k = holiday
            return (lambda y: day_span(y, hm, hd)), k, "day"
        return None

    def named(self, inst: Instance, mode: str, j: int, unit: str) -> Match | None:
        """The instance of a yearly name (May, summer, Christmas) that the mode picks."""
        t = self.today
        span = latest_instance(inst, t, 1 if mode == "last" else 0)
        if mode == "this" and (span is None or span[1] <= t):  # none under way
            span = inst(t.year)
        elif mode == "next":
            span = next((s for y in range(t.year, t.year + 9) if (s := inst(y)) and s[0] > t), None)
        if span is None:  # 31 April
            return None
        return Match(*span, j, unit, partial(latest_instance, inst) if mode == "" else None)

    def weekday(self, wd: int, mode: str, j: int) -> Match:
        t = self.today
        if mode == "last":
            d = t - timedelta(days=(t.weekday() - wd - 1) % 7 + 1)
        elif mode == "next":
            d = t + timedelta(days=(wd - t.weekday() - 1) % 7 + 1)
        else:
            d = t - timedelta(days=(t.weekday() - wd) % 7)

        def latest(bound: date) -> Span:
            b = bound - timedelta(days=(bound.weekday() - wd) % 7)
            return b, b + DAY

        return Match(d, d + DAY, self.skip_part(j), "day", latest if mode != "next" else None)

    def calendar(self, i: int, ctx: bool) -> Match | None:
        """Dates, months, years, seasons, holidays, decades and weekdays."""
        if self.w(i) in WEEKDAYS:  # "Sunday, May 7" is the date; "on Sunday" the weekday
            k = i + 1 + (self.w(i + 1) == ",")
            full = longest(self.day_first(k), self.month_first(k, False))
            if full is not None and full.unit == "day":
                return full
            return self.weekday(WEEKDAYS[self.w(i)], "", i + 1) if ctx else None
        c = self.c(i)
        return longest(
            self.day_first(i) if c in "TNO" else None,
            self.month_first(i, ctx) if c == "M" else None,
            self.year(i, ctx) if c in "TUN" else None,
            self.season(i, ctx) if c in "TS" else None,
            self.holiday_date(i) if c in "Rh" else None,
            self.decade(i) if c in "TND" else None,
        )

    def day_first(self, i: int) -> Match | None:  # "7 May 2023", "the 7th of May"
        j = i + (self.w(i) == "the")
        day = self.day_num(j)
        month = self.month(j + 1 + (self.w(j + 1) == "of")) if day else None
        return self.month_day(month[0], day, month[1]) if day and month else None

    def month_first(self, i: int, ctx: bool) -> Match | None:  # "May 7, 2023", "May 2023"
        month = self.month(i)
        if month is None:
            return None
        m, j = month
        day = self.day_num(j)
        if day is not None:
            return self.month_day(m, day, j + 1)
        year = self.year_after(j)
        if year is not None:
            return Match(*unit_of(date(year[0], m, 1), "month"), year[1], "month")
        return (
            self.named(lambda y: unit_of(date(y, m, 1), "month"), "", j, "month") if ctx else None
        )

    def month_day(self, m: int, d: int, j: int) -> Match | None:
        year = self.year_after(j)
        if year is None:
            return self.named(lambda y: day_span(y, m, d), "", j, "day")
        span = day_span(year[0], m, d)
        return Match(*span, year[1], "day") if span else None

    def year(self, i: int, ctx: bool) -> Match | None:
        j = i
        if self.w(i) == "the" and self.w(i + 1) == "year":  # "the year 2022" is a year
            j, ctx = i + 2, True
        elif self.w(i) == "year" and ctx:  # "in year 2022"
            j = i + 1
        y = self.year_num(j) if ctx else None
        return Match(date(y, 1, 1), date(y + 1, 1, 1), j + 1, "year") if y else None

    def season(self, i: int, ctx: bool) -> Match | None:
        j = i + (self.w(i) == "the")
        name = self.name(j) if self.w(j) in SEASONS else None
        if name is None:
            return None
        year = self.year_after(j + 1)
        if year is None:
            return self.named(name[0], "", j + 1, "season") if ctx else None
        span = name[0](year[0])
        return Match(*span, year[1], "season") if span else None

    def holiday_date(self, i: int) -> Match | None:
        holiday = self.holiday(i)
        return self.month_day(*holiday[0], holiday[1]) if holiday else None

    def decade(self, i: int, the: bool = False) -> Match | None:  # "the 1990s", "the '90s"
        j = i + (self.w(i) == "the")
        the = the or j > i
        j += self.w(j) == "'"
        if self.c(j) == "D":
            k = j + 1
        elif self.c(j) == "N" and self.w(j + 1) == "'s":
            k = j + 2
        else:
            return None
        n, digits = self.num(j), len(self.w(j).rstrip("s"))
        if n % 10:
            return None
        if digits == 4 and 1800 <= n <= 2100:
            y = n
        elif digits == 2 and the:
            y = self.today.year // 100 * 100 + n
            y -= 100 if y > self.today.year else 0
        else:
            return None
        return Match(date(y, 1, 1), date(y + 10, 1, 1), k, "decade")
