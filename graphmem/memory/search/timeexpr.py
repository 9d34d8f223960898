"""English time expressions ("last week", "in May 2023", "the Sunday before 25 May 2023")
resolved to datetime ranges, by rules alone, for recall's date-aware ranking.

The text is cut into tokens by one regex whose repetitions cannot overlap (so it never
backtracks far), a second regex over one-letter token classes picks the few tokens that may
start an expression, and each of those starts a bounded amount of look-ahead (anchored
expressions nest at most two deep): parsing is linear in the input, a megabyte of prose
takes a fraction of a second, and each expression found costs some microseconds more.
Here are the expressions made of others (ranges, "the week before X", "early X") and the
entry points; the vocabulary and tokens are in ``timewords.py``, the date arithmetic in
``timespans.py``, the rules for dates and names in ``timecalendar.py`` and those relative
to today in ``timerelative.py``. Conventions, with the reason for each:

- Ranges are half-open ``[start, end)`` in ``now``'s tzinfo, so periods tile without
  overlap: a day is [00:00, next 00:00), a month [1st, next 1st), a year [1 Jan, next 1 Jan).
- Past-leaning, because recall asks about what already happened: a name without a year
  ("in May", "May 7th", "Christmas", "in the summer") is its latest instance starting on
  or before today, and "on Friday" / "this Friday" the latest Friday on or before today.
- "last X" / "next X" for a named period (Friday, May, summer, Christmas) is the latest
  instance already over / the first not yet begun: "last Friday" said on a Friday is a
  week ago. "this X" is the instance containing today, else the one in now's year.
- Weeks are ISO weeks, Monday to Monday; "last week" is the calendar week before now's,
  "this weekend" Saturday 00:00 to Monday 00:00 of now's week.
- "N units ago" is the whole calendar unit N back ("2 weeks ago" is a Monday-Sunday week),
  so "1 week ago" is "last week". Counts: digits, one..twelve, a/an, a couple (of) = 2,
  a few = 3.
- "the past N units" (also "the last N", "last N", "past N", and N = 1 with no number) is a
  rolling window from today's 00:00 minus N units to tomorrow's 00:00, so today counts;
  only "the" or a number tells "the last week" (rolling) from "last week" (calendar).
- "recently" / "lately" are the rolling last 30 days, the usual sense of the word;
  "earlier this week / month / year" and "earlier today" run from its start to now.
- Parts of a day ("this morning", "last night", "on Friday evening") are the whole day
  (last night is yesterday): memories are often dated to the day only.
- early / mid / late (and "the beginning / middle / end of") split a year into thirds of
  four months, a month into days 1-10, 11-20 and 21 to the end, and a decade into years
  0-3, 4-6 and 7-9; "the first / last week of" a month or year is its first / last 7 days.
- Seasons are northern meteorological ones: spring Mar-May, summer Jun-Aug, autumn/fall
  Sep-Nov, winter Dec-Feb; "winter 2022" starts in December 2022.
- Open bounds are datetime.min / datetime.max with now's tzinfo. "before X" is
  [min, X.start); "until / by X" includes X: [min, X.end), since "until June" reaches into June.
- "since X" is [X.start, now) and "after X" [X.end, now): they ask about the past; when X
  is still ahead of now the end is datetime.max.
- "from / between X to / and Y" is [X.start, Y.end); a yearless X is its latest instance
  starting on or before Y ("between May and July 2023" is May to July 2023).
- "the week / month before X" is the rolling unit just before X ("the week before 9 June
  2023" is 2 to 9 June); "two days before X" one day; "the two weeks before X" both weeks;
  "the Sunday before X" the latest Sunday before X's first day; "the week / weekend of X"
  the ISO week (its weekend) holding the day X. An anchor's datetime stands for its whole
  day in now's tzinfo (a naive one is taken as already in it).
- A number is a year (1900-2100) only in a time context: after in, during, of, on, since,
  before, after, until, by, from ... to or between ... and, beside a month, season or
  holiday, or after early / mid / late / "the year"; not when a counted noun follows
  ("in 2000 steps").
- Bare month and weekday names need such a context too (in, on, last, a day number, a
  year), since they are also ordinary words: "May I ask", "march on", "sunday school"
  give nothing ("on Sunday school days" does give Sunday). Holiday names and "1990s"
  need none.
- "the 90s" is the latest decade of that name starting on or before now.
- Slash dates (5/7/2023) are left out: month-first and day-first cannot be told apart.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from graphmem.memory.search.timerelative import RelativeRules
from graphmem.memory.search.timespans import (
    DAY,
    OPEN_HI,
    OPEN_LO,
    Match,
    Span,
    longest,
    piece,
    shift,
    unit_of,
)
from graphmem.memory.search.timewords import CANDIDATE, OPS, PARTS, PREPS, UNITS, WEEKDAYS


@dataclass(frozen=True)
class TimeRange:
    start: datetime  # inclusive, in now's tzinfo
    end: datetime  # exclusive
    text: str  # the expression as it appears in the input
    span: tuple[int, int]  # character offsets into the input


_MAX_DEPTH = 2  # "the day before the week after X": deeper nesting is not English


class _Parser(RelativeRules):
    def __init__(self, text: str, now: datetime, anchors: Mapping[str, datetime]) -> None:
        super().__init__(text, now, anchors)
        self.cores: dict[tuple[int, bool], Match | None] = {}

    def parse(self, candidates: Iterable[int]) -> list[TimeRange]:
        out, i = [], 0
        for start in candidates:
            if start < i:  # inside the previous match
                continue
            try:
                m = self.top(start)
            except (ValueError, OverflowError):  # "9999 years ago" leaves the calendar
                m = None
            if m is not None:
                out.append(self.emit(start, m))
                i = m.j
        return out

    def emit(self, i: int, m: Match) -> TimeRange:
        tz = self.now.tzinfo
        start = datetime.min.replace(tzinfo=tz) if m.lo == OPEN_LO else self.at(m.lo)
        end = datetime.max.replace(tzinfo=tz) if m.hi == OPEN_HI else self.at(m.hi)
        span = (self.ends[i] - len(self.words[i]), self.ends[m.j - 1])
        return TimeRange(start, self.now if m.to_now else end, self.text[span[0] : span[1]], span)

    def at(self, d: date) -> datetime:
        return datetime(d.year, d.month, d.day, tzinfo=self.now.tzinfo)

    # -- grammar: each rule takes a token index and returns a match or None --

    def top(self, i: int) -> Match | None:
        m = longest(self.ranges(i), self.bounded(i, False, 0))
        if self.w(i) in PREPS:  # the preposition is part of the expression's text
            inner = self.bounded(i + 1, True, 0)
            if self.w(i) in ("on", "during"):  # "on my birthday"
                inner = longest(inner, self.anchor(i + 1))
            m = longest(m, inner)
        return m

    def ranges(self, i: int) -> Match | None:
        w = self.w(i)
        if w in ("from", "between"):
            return self.from_to(
                i, ("and",) if w == "between" else ("to", "until", "till", "through", "thru", "-")
            )
        op, k = OPS.get(w), i + 1
        if (w, self.w(i + 1)) == ("prior", "to"):
            op, k = "before", i + 2
        elif w == "up" and self.w(i + 1) in ("to", "until", "till"):
            op, k = "until", i + 2
        x = self.ref(k, 0) if op else None
        if x is None:
            return None
        if op in ("since", "after"):
            lo = x.lo if op == "since" else x.hi
            return Match(lo, OPEN_HI, x.j, "range", to_now=lo <= self.today)
        return Match(OPEN_LO, x.lo if op == "before" else x.hi, x.j, "range")

    def from_to(self, i: int, separators: tuple[str, ...]) -> Match | None:
        x = self.ref(i + 1, 0)
        if x is None or self.w(x.j) not in separators:
            return None
        y = self.ref(x.j + 1, 0)
        if y is None:
            return None
        lo = x.lo
        if x.redo is not None:
            again = x.redo(y.lo)
            lo = again[0] if again else lo
        return Match(lo, y.hi, y.j, "range") if lo < y.hi else None

    def ref(self, i: int, depth: int) -> Match | None:
        """What before / after / since / from may point at, an anchor included."""
        return longest(self.bounded(i, True, depth), self.anchor(i))

    def bounded(self, i: int, ctx: bool, depth: int) -> Match | None:
        return longest(self.core(i, ctx), self.anchored(i, depth))

    def core(self, i: int, ctx: bool) -> Match | None:
        """A period with both ends; ctx says a preposition before it makes it a date."""
        # remembered, as "the day before the day before ..." asks again at each depth
        key = (i, ctx)
        if key not in self.cores:
            if len(self.cores) > 64:  # only nearby tokens are asked again
                self.cores.clear()
            self.cores[key] = self.core_rules(i, ctx)
        return self.cores[key]

    def core_rules(self, i: int, ctx: bool) -> Match | None:
        c = self.c(i)  # only the rules that can begin with this class of token
        return longest(
            self.iso(i) if c == "I" else None,
            self.relative(i) if c == "R" else None,
            self.modified(i) if c == "X" else None,
            self.ago(i) if c in "NAC" else None,
            self.rolling(i) if c in "VTX" else None,
            self.earlier(i) if c == "L" else None,
            self.calendar(i, ctx) if c in "WTONMUSRhD" else None,
            self.part(i) if c in "EBT" else None,
        )

    def anchor(self, i: int) -> Match | None:
        if self.w(i) not in self.anchor_first:
            return None
        for n in range(min(self.anchor_len, len(self.words) - i), 0, -1):
            d = self.anchors.get(tuple(self.words[i : i + n]))
            if d is not None:
                return Match(d, d + DAY, i + n, "day")
        return None

    def anchored(self, i: int, depth: int) -> Match | None:
        if depth >= _MAX_DEPTH or self.c(i) not in "TACNUGW":
            return None
        window = self.w(i) == "the"
        j = i + window
        counted = self.count(j)
        n, j = counted or (1, j)
        what = self.w(j)
        unit = UNITS.get(what)
        if unit is None and (counted or (what != "weekend" and what not in WEEKDAYS)):
            return None
        how = self.w(j + 1)
        of = how == "of" and window and not counted and what in ("week", "weekend")
        if how not in ("before", "after") and not of:
            return None
        x = self.ref(j + 2, depth + 1)
        if x is None:
            return None
        if of:  # "the week of 9 June 2023": the one holding that day
            monday = unit_of(x.lo, "week")[0]
            if x.hi - x.lo != DAY:
                return None
            if what == "weekend":
                return Match(monday + timedelta(days=5), monday + timedelta(days=7), x.j, "range")
            return Match(monday, monday + timedelta(days=7), x.j, "week")
        before = how == "before"
        if unit is not None:
            if before:
                return Match(shift(x.lo, unit, -n), x.lo if window else shift(x.lo, unit, 1 - n),
                          x.j, "range")  # fmt: skip
            lo = x.hi if window else shift(x.hi, unit, n - 1)
            return Match(lo, shift(x.hi, unit, n), x.j, "range")
        wd, length = (5, 2) if what == "weekend" else (WEEKDAYS[what], 1)
        if before:  # the latest one over by X's start
            last = x.lo - timedelta(days=length)
            d = last - timedelta(days=(last.weekday() - wd) % 7)
        else:
            d = x.hi + timedelta(days=(wd - x.hi.weekday()) % 7)
        return Match(d, d + timedelta(days=length), x.j, "range" if length > 1 else "day")

    def part(self, i: int) -> Match | None:
        """early / mid / late X, the beginning / middle / end of X and the first / last week
        of X, X a month or year."""
        w, nxt = self.w(i), self.w(i + 1)
        if w in ("early", "mid", "late") and nxt != "the":
            p, j = PARTS[w], i + 1 + (nxt == "-")
        elif w == "the" and nxt in ("early", "mid", "late"):  # "the late 90s"
            p, j = PARTS[nxt], i + 2 + (self.w(i + 2) == "-")
        elif w == "the" and nxt in PARTS and self.w(i + 2) == "of":
            p, j = PARTS[nxt], i + 3
        elif w in PARTS and nxt == "of":
            p, j = PARTS[w], i + 2
        elif (
            w == "the" and nxt in ("first", "last") and self.words[i + 2 : i + 4] == ["week", "of"]
        ):
            p, j = 3 if nxt == "first" else 4, i + 4
        else:
            return None
        m = longest(self.calendar(j, True), self.modified(j), self.decade(j, w == "the"))
        span = piece(m.lo, m.hi, m.unit, p) if m else None
        if m is None or span is None:
            return None
        whole = m.redo

        def redo(bound: date) -> Span | None:
            again = whole(bound) if whole else None
            return piece(*again, m.unit, p) if again else None

        return Match(*span, m.j, "range", redo if whole else None)


def parse_times(
    text: str, now: datetime, anchors: Mapping[str, datetime] | None = None
) -> list[TimeRange]:
    """All time expressions in `text`, left to right, non-overlapping (longest match wins).

    `now` must be timezone-aware; `anchors` maps lower-cased event phrases ("the trip") to
    a datetime, for "the week before the trip"."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    parser = _Parser(text, now, anchors or {})
    return parser.parse(m.start() for m in CANDIDATE.finditer(parser.sig))


def overlap_days(memory_time: datetime, ranges: Sequence[TimeRange]) -> float:
    """Days from `memory_time` to the nearest range: 0.0 inside one, +inf with no ranges."""
    if memory_time.tzinfo is None:
        raise ValueError("memory_time must be timezone-aware")
    best = math.inf
    for r in ranges:
        if r.start <= memory_time < r.end:
            return 0.0
        gap = r.start - memory_time if memory_time < r.start else memory_time - r.end
        best = min(best, gap.total_seconds() / 86400)
    return best
