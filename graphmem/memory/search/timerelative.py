"""The rules of English time expressions relative to today (``timeexpr.py``): today,
yesterday, "recently"; this / last / next + a unit, weekend, weekday, month, season or
holiday; "3 days ago"; rolling windows ("the past two weeks"); "earlier this month".
Each rule takes a token index and returns a match or None.
"""

from __future__ import annotations

from datetime import timedelta

from graphmem.memory.search.timecalendar import CalendarRules
from graphmem.memory.search.timespans import DAY, Match, shift, unit_of
from graphmem.memory.search.timewords import DAY_OFFSETS, DAY_PARTS, MODES, UNITS, WEEKDAYS


class RelativeRules(CalendarRules):
    """Periods counted from today, and the calendar's names picked relative to it."""

    def relative(self, i: int) -> Match | None:
        w = self.w(i)
        if w in DAY_OFFSETS:
            d = self.today + timedelta(days=DAY_OFFSETS[w])
            return Match(d, d + DAY, self.skip_part(i + 1), "day")
        if w in ("recently", "lately"):
            return Match(self.today - timedelta(days=30), self.today + DAY, i + 1, "range")
        return None

    def modified(self, i: int) -> Match | None:
        """this / last / next + a unit, a weekend, a weekday, a month, a season, a holiday."""
        w, j = self.w(i), i + 1
        mode = MODES.get(w)
        if w == "this" and self.w(j) in ("past", "last", "coming"):
            mode, j = "next" if self.w(j) == "coming" else "last", j + 1
        if mode is None:
            return None
        what, t = self.w(j), self.today
        step = {"this": 0, "last": -1, "next": 1}[mode]
        if what in ("week", "month", "year") and self.w(j + 1) != "of":  # "last week of May"
            return Match(*unit_of(shift(t, what, step), what), j + 1, what)
        if what == "weekend":
            saturday = unit_of(t, "week")[0] + timedelta(days=7 * step + 5)
            return Match(saturday, saturday + timedelta(days=2), j + 1, "range")
        if what in DAY_PARTS and mode != "next":
            d = t - DAY if mode == "last" else t  # "last night" is yesterday's
            return Match(d, d + DAY, j + 1, "day")
        if what in WEEKDAYS:
            return self.weekday(WEEKDAYS[what], mode, j + 1)
        name = self.name(j)
        if name is not None:
            return self.named(name[0], mode, name[1], name[2])
        counted = self.count(j) if mode != "this" else None
        if counted and self.w(counted[1]) in UNITS:  # "last 3 days", "next two weeks"
            n, k, unit = *counted, UNITS[self.w(counted[1])]
            if mode == "last":
                return Match(shift(t, unit, -n), t + DAY, k + 1, "range")
            return Match(t + DAY, shift(t + DAY, unit, n), k + 1, "range")
        return None

    def ago(self, i: int) -> Match | None:
        counted = self.count(i)
        if counted is None:
            return None
        n, j = counted
        unit = UNITS.get(self.w(j))
        if unit is None or self.w(j + 1) != "ago":
            return None
        return Match(*unit_of(shift(self.today, unit, -n), unit), j + 2, unit)

    def rolling(self, i: int) -> Match | None:
        j = i + (self.w(i) in ("over", "within", "for"))
        the = self.w(j) == "the"
        j += the
        if not (self.w(j) == "past" or (the and self.w(j) == "last")):
            return None
        n, j = self.count(j + 1) or (1, j + 1)
        unit = UNITS.get(self.w(j))
        if unit is None or self.w(j + 1) == "of":  # "the last week of June" is not rolling
            return None
        return Match(shift(self.today, unit, -n), self.today + DAY, j + 1, "range")

    def earlier(self, i: int) -> Match | None:
        w, nxt = self.w(i), self.w(i + 1)
        if w not in ("earlier", "later"):
            return None
        if nxt == "today":
            unit, j = "day", i + 2
        elif nxt == "this" and self.w(i + 2) in ("week", "month", "year"):
            unit, j = self.w(i + 2), i + 3
        else:
            return None
        lo, hi = unit_of(self.today, unit)
        tomorrow = self.today + DAY
        if w == "earlier":
            return Match(lo, tomorrow, j, "range", to_now=True)
        return Match(tomorrow, hi, j, "range") if tomorrow < hi else None
