"""English time expressions ("last week", "in May 2023", "the Sunday before 25 May 2023")
resolved to datetime ranges, by rules alone, for recall's date-aware ranking.

The text is cut into tokens by one regex whose repetitions cannot overlap (so it never
backtracks far), a second regex over one-letter token classes picks the few tokens that may
start an expression, and each of those starts a bounded amount of look-ahead (anchored
expressions nest at most two deep): parsing is linear in the input, a megabyte of prose
takes a fraction of a second, and each expression found costs some microseconds more.
Conventions, with the reason for each:

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

import calendar
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import partial
from itertools import accumulate
from operator import add
from typing import NamedTuple


@dataclass(frozen=True)
class TimeRange:
    start: datetime  # inclusive, in now's tzinfo
    end: datetime  # exclusive
    text: str  # the expression as it appears in the input
    span: tuple[int, int]  # character offsets into the input


_TOKEN = re.compile(
    r"\d{4}-\d\d?-\d\d?(?![\d-])"  # ISO date
    r"|\d+[a-z]*"  # number, maybe with a suffix: 7th, 1990s
    r"|[a-z]+(?:['\u2019](?!s\b)[a-z]+)?"  # word, maybe with an apostrophe: don't
    r"|['\u2019]s\b"  # a possessive on its own, so that "last year's" holds "last year"
    r"|[,.'\u2019-]",
    re.IGNORECASE | re.ASCII,
)
_MONTH_NAMES = "january jan|february feb|march mar|april apr|may|june jun|july jul|august aug|"
_MONTH_NAMES += "september sep sept|october oct|november nov|december dec"
_MONTHS = {n: i for i, ns in enumerate(_MONTH_NAMES.split("|"), 1) for n in ns.split()}
_MONTH_ABBR = {n for n in _MONTHS if len(n) <= 4 and n not in ("may", "june", "july")}
# sat, sun, wed and mon are left out: they are ordinary words too often
_WEEKDAY_NAMES = "monday|tuesday tue tues|wednesday weds|thursday thu thur thurs|friday fri"
_WEEKDAY_NAMES += "|saturday|sunday"
_WEEKDAYS = {n: i for i, ns in enumerate(_WEEKDAY_NAMES.split("|")) for n in ns.split()}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_HOLIDAYS: dict[tuple[str, ...], tuple[int, int]] = {  # longest first
    ("christmas", "eve"): (12, 24),
    ("christmas", "day"): (12, 25),
    ("christmas",): (12, 25),
    ("new", "year", "'s", "eve"): (12, 31),
    ("new", "years", "eve"): (12, 31),
    ("new", "year", "'s", "day"): (1, 1),
    ("new", "year", "'s"): (1, 1),
    ("halloween",): (10, 31),
    ("valentine", "'s", "day"): (2, 14),
}
_UNITS = {u + s: u for u in ("day", "week", "month", "year") for s in ("", "s")}
_NUMBER_WORDS = "one two three four five six seven eight nine ten eleven twelve"
_NUMBERS = {w: i for i, w in enumerate(_NUMBER_WORDS.split(), 1)}
_DAY_OFFSETS = {"today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1}
_DAY_PARTS = {"morning", "afternoon", "evening", "night"}
_MODES = {"this": "this", "last": "last", "next": "next", "coming": "next"}
_PARTS = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
_PREPS = {"in", "during", "throughout", "of", "on"}  # make the next year or name a date
_OPS = {"since": "since", "after": "after", "before": "before", "until": "until"}
_OPS |= {"till": "until", "til": "until", "by": "until"}
# a number followed by one of these counts things ("in 2000 steps"), it is not a year
_COUNTED = set(
    "people persons steps dollars euros pounds miles km kilometers meters feet words pages "
    "times points votes calories items users members students copies followers views likes "
    "years days hours minutes".split()
)

# Every token gets a one-character class, and a regex over the classes of a token and the
# next one finds where an expression may start: at C speed, so that a megabyte of words
# ("May May May ...", "1 1 1 ...") costs no Python per token. The table is a superset of
# what the grammar below accepts (a test compares parsing with and without it).
_CLASS_WORDS = {
    "M": " ".join(_MONTHS), "W": " ".join(_WEEKDAYS), "S": " ".join(_SEASONS),
    "U": " ".join(_UNITS), "G": "weekend", "h": "new valentine", "T": "the", "A": "a an",
    "R": "today tonight yesterday tomorrow recently lately christmas halloween",
    "C": "few couple " + _NUMBER_WORDS, "X": "this last next coming past first",
    "E": "early mid late", "B": "beginning start middle end", "L": "earlier later",
    "V": "over within for", "P": " ".join(_PREPS), "Q": " ".join(_OPS), "F": "from between",
    "q": "prior up", "t": "to and through thru", "z": " ".join(_DAY_PARTS),
    ",": ",", ".": ".", "'": "'", "-": "-", "s": "'s",
}  # fmt: skip
_CLASS = {w: c for c, ws in _CLASS_WORDS.items() for w in ws.split()}
# plus I: ISO date, N: number, O: ordinal (7th), D: decade (1990s), K: an anchor's first
# word, _: anything else
_FOLLOW = {
    "N": "MPUs", "O": "MP", "M": "NO,.P", "W": ",MNOQT", "S": "NP,", "h": "Us", "U": "Q",
    "G": "Q", "T": "ONDU'SBXCAWGE", "A": "UC", "C": "UP", "X": "UGWMSRhzNCAX", "E": "NMXUD-",
    "B": "P", "L": "RX", "V": "TX", "q": "tQ",
}  # fmt: skip
_CANDIDATE = re.compile(
    "[IRD]|[PQF](?=[^_,.'\\-tzPQFq])|"  # whole by themselves | in, since, from + a time
    + "|".join(f"{a}(?=[{re.escape(b)}])" for a, b in _FOLLOW.items())
)
_MAX_DEPTH = 2  # "the day before the week after X": deeper nesting is not English
_MAX_ANCHOR_WORDS = 12
_PAD = 16
_DAY = timedelta(days=1)

_Span = tuple[date, date]
_Redo = Callable[[date], _Span | None]
_Instance = Callable[[int], _Span | None]  # a yearly name's instance in a given year


class _M(NamedTuple):
    """A match: dates (date.min / date.max for open bounds) and the next token's index."""

    lo: date
    hi: date
    j: int
    unit: str  # day, week, month, year, season, decade or range: what early/late may split
    redo: _Redo | None = None  # a yearless name, as its latest instance on or before a date
    to_now: bool = False  # the end is now itself


_OPEN_LO, _OPEN_HI = date.min, date.max


def _tokenize(text: str) -> tuple[list[str], list[int]]:
    """Lower-cased tokens and their end offsets, built without Python code per token."""
    raw = _TOKEN.findall(text)
    gaps = _TOKEN.split(text)  # the text between tokens, one more than there are tokens
    # tokens hold no newline, and ASCII lower-casing keeps every length
    words = "\n".join(raw).lower().replace("\u2019", "'").split("\n") if raw else []
    return words, list(accumulate(map(add, map(len, gaps), map(len, raw))))


def _digit_class(word: str) -> str:
    if "-" in word:
        return "I"
    return {"": "N", "s": "D", "st": "O", "nd": "O", "rd": "O", "th": "O"}.get(
        word.lstrip("0123456789"), "_"
    )


def _shift(d: date, unit: str, n: int) -> date:
    if unit in ("day", "week"):
        return d + timedelta(days=n * (7 if unit == "week" else 1))
    y, m = divmod(d.month - 1 + n * (12 if unit == "year" else 1), 12)
    y += d.year
    return date(y, m + 1, min(d.day, calendar.monthrange(y, m + 1)[1]))


def _unit_of(d: date, unit: str) -> _Span:
    """The calendar day, week, month or year containing d."""
    if unit == "day":
        return d, d + _DAY
    if unit == "week":
        monday = d - timedelta(days=d.weekday())
        return monday, monday + timedelta(days=7)
    if unit == "month":
        return date(d.year, d.month, 1), date(d.year + d.month // 12, d.month % 12 + 1, 1)
    return date(d.year, 1, 1), date(d.year + 1, 1, 1)


def _piece(lo: date, hi: date, unit: str, part: int) -> _Span | None:
    """Thirds (0, 1, 2) of a month, year or decade; first and last weeks (3, 4) of the first
    two."""
    if unit == "decade" and part < 3:
        return date(lo.year + (0, 4, 7)[part], 1, 1), date(lo.year + (4, 7, 10)[part], 1, 1)
    if unit not in ("month", "year"):
        return None
    if part >= 3:
        return (lo, lo + timedelta(days=7)) if part == 3 else (hi - timedelta(days=7), hi)
    if unit == "year":
        return _shift(lo, "month", 4 * part), _shift(lo, "month", 4 * part + 4)
    return lo + timedelta(days=10 * part), hi if part == 2 else lo + timedelta(10 * part + 10)


def _day(y: int, m: int, d: int) -> _Span | None:
    try:
        return date(y, m, d), date(y, m, d) + _DAY
    except ValueError:  # 29 February of a common year, 31 April
        return None


def _latest(inst: _Instance, bound: date, end: int = 0) -> _Span | None:
    """The latest instance whose start (or end, with end=1) is on or before bound; eight
    years back reach a 29 February."""
    for y in range(bound.year + 1, bound.year - 9, -1):
        span = inst(y)
        if span is not None and span[end] <= bound:
            return span
    return None


def _longest(*matches: _M | None) -> _M | None:
    best = None
    for m in matches:
        if m is not None and (best is None or m.j > best.j):
            best = m
    return best


class _Parser:
    def __init__(self, text: str, now: datetime, anchors: Mapping[str, datetime]) -> None:
        self.text, self.now, self.today = text, now, now.date()
        self.words, self.ends = _tokenize(text)
        self.n = len(self.words)  # tokens, before the padding
        self.anchors: dict[tuple[str, ...], date] = {}
        for key, when in anchors.items():
            words = tuple(_tokenize(key)[0])
            if 0 < len(words) <= _MAX_ANCHOR_WORDS:
                self.anchors[words] = (when.astimezone(now.tzinfo) if when.tzinfo else when).date()
        self.anchor_len = max(map(len, self.anchors), default=0)
        self.anchor_first = {k[0] for k in self.anchors}
        classes = {**dict.fromkeys(self.anchor_first, "K"), **_CLASS}
        for w in set(self.words).difference(classes):
            classes[w] = _digit_class(w) if w[0] <= "9" else "_"
        # padding: a rule looks at most a few tokens past the last one it matched, so the
        # lookups need no bounds checks (a C call instead of a Python one)
        self.sig = "".join(map(classes.__getitem__, self.words)) + " " * _PAD
        self.words += [""] * _PAD
        self.w: Callable[[int], str] = self.words.__getitem__
        self.c: Callable[[int], str] = self.sig.__getitem__
        self.cores: dict[tuple[int, bool], _M | None] = {}

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

    def emit(self, i: int, m: _M) -> TimeRange:
        tz = self.now.tzinfo
        start = datetime.min.replace(tzinfo=tz) if m.lo == _OPEN_LO else self.at(m.lo)
        end = datetime.max.replace(tzinfo=tz) if m.hi == _OPEN_HI else self.at(m.hi)
        span = (self.ends[i] - len(self.words[i]), self.ends[m.j - 1])
        return TimeRange(start, self.now if m.to_now else end, self.text[span[0] : span[1]], span)

    def at(self, d: date) -> datetime:
        return datetime(d.year, d.month, d.day, tzinfo=self.now.tzinfo)

    # -- grammar: each rule takes a token index and returns a match or None --

    def top(self, i: int) -> _M | None:
        m = _longest(self.ranges(i), self.bounded(i, False, 0))
        if self.w(i) in _PREPS:  # the preposition is part of the expression's text
            inner = self.bounded(i + 1, True, 0)
            if self.w(i) in ("on", "during"):  # "on my birthday"
                inner = _longest(inner, self.anchor(i + 1))
            m = _longest(m, inner)
        return m

    def ranges(self, i: int) -> _M | None:
        w = self.w(i)
        if w in ("from", "between"):
            return self.from_to(
                i, ("and",) if w == "between" else ("to", "until", "till", "through", "thru", "-")
            )
        op, k = _OPS.get(w), i + 1
        if (w, self.w(i + 1)) == ("prior", "to"):
            op, k = "before", i + 2
        elif w == "up" and self.w(i + 1) in ("to", "until", "till"):
            op, k = "until", i + 2
        x = self.ref(k, 0) if op else None
        if x is None:
            return None
        if op in ("since", "after"):
            lo = x.lo if op == "since" else x.hi
            return _M(lo, _OPEN_HI, x.j, "range", to_now=lo <= self.today)
        return _M(_OPEN_LO, x.lo if op == "before" else x.hi, x.j, "range")

    def from_to(self, i: int, separators: tuple[str, ...]) -> _M | None:
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
        return _M(lo, y.hi, y.j, "range") if lo < y.hi else None

    def ref(self, i: int, depth: int) -> _M | None:
        """What before / after / since / from may point at, an anchor included."""
        return _longest(self.bounded(i, True, depth), self.anchor(i))

    def bounded(self, i: int, ctx: bool, depth: int) -> _M | None:
        return _longest(self.core(i, ctx), self.anchored(i, depth))

    def core(self, i: int, ctx: bool) -> _M | None:
        """A period with both ends; ctx says a preposition before it makes it a date."""
        # remembered, as "the day before the day before ..." asks again at each depth
        key = (i, ctx)
        if key not in self.cores:
            if len(self.cores) > 64:  # only nearby tokens are asked again
                self.cores.clear()
            self.cores[key] = self.core_rules(i, ctx)
        return self.cores[key]

    def core_rules(self, i: int, ctx: bool) -> _M | None:
        c = self.c(i)  # only the rules that can begin with this class of token
        return _longest(
            self.iso(i) if c == "I" else None,
            self.relative(i) if c == "R" else None,
            self.modified(i) if c == "X" else None,
            self.ago(i) if c in "NAC" else None,
            self.rolling(i) if c in "VTX" else None,
            self.earlier(i) if c == "L" else None,
            self.calendar(i, ctx) if c in "WTONMUSRhD" else None,
            self.part(i) if c in "EBT" else None,
        )

    def anchor(self, i: int) -> _M | None:
        if self.w(i) not in self.anchor_first:
            return None
        for n in range(min(self.anchor_len, len(self.words) - i), 0, -1):
            d = self.anchors.get(tuple(self.words[i : i + n]))
            if d is not None:
                return _M(d, d + _DAY, i + n, "day")
        return None

    def anchored(self, i: int, depth: int) -> _M | None:
        if depth >= _MAX_DEPTH or self.c(i) not in "TACNUGW":
            return None
        window = self.w(i) == "the"
        j = i + window
        counted = self.count(j)
        n, j = counted or (1, j)
        what = self.w(j)
        unit = _UNITS.get(what)
        if unit is None and (counted or (what != "weekend" and what not in _WEEKDAYS)):
            return None
        how = self.w(j + 1)
        of = how == "of" and window and not counted and what in ("week", "weekend")
        if how not in ("before", "after") and not of:
            return None
        x = self.ref(j + 2, depth + 1)
        if x is None:
            return None
        if of:  # "the week of 9 June 2023": the one holding that day
            monday = _unit_of(x.lo, "week")[0]
            if x.hi - x.lo != _DAY:
                return None
            if what == "weekend":
                return _M(monday + timedelta(days=5), monday + timedelta(days=7), x.j, "range")
            return _M(monday, monday + timedelta(days=7), x.j, "week")
        before = how == "before"
        if unit is not None:
            if before:
                return _M(_shift(x.lo, unit, -n), x.lo if window else _shift(x.lo, unit, 1 - n),
                          x.j, "range")  # fmt: skip
            lo = x.hi if window else _shift(x.hi, unit, n - 1)
            return _M(lo, _shift(x.hi, unit, n), x.j, "range")
        wd, length = (5, 2) if what == "weekend" else (_WEEKDAYS[what], 1)
        if before:  # the latest one over by X's start
            last = x.lo - timedelta(days=length)
            d = last - timedelta(days=(last.weekday() - wd) % 7)
        else:
            d = x.hi + timedelta(days=(wd - x.hi.weekday()) % 7)
        return _M(d, d + timedelta(days=length), x.j, "range" if length > 1 else "day")

    def iso(self, i: int) -> _M | None:
        if self.c(i) != "I":
            return None
        span = _day(*map(int, self.words[i].split("-")))
        return _M(*span, i + 1, "day") if span else None

    def relative(self, i: int) -> _M | None:
        w = self.w(i)
        if w in _DAY_OFFSETS:
            d = self.today + timedelta(days=_DAY_OFFSETS[w])
            return _M(d, d + _DAY, self.skip_part(i + 1), "day")
        if w in ("recently", "lately"):
            return _M(self.today - timedelta(days=30), self.today + _DAY, i + 1, "range")
        return None

    def modified(self, i: int) -> _M | None:
        """this / last / next + a unit, a weekend, a weekday, a month, a season, a holiday."""
        w, j = self.w(i), i + 1
        mode = _MODES.get(w)
        if w == "this" and self.w(j) in ("past", "last", "coming"):
            mode, j = "next" if self.w(j) == "coming" else "last", j + 1
        if mode is None:
            return None
        what, t = self.w(j), self.today
        step = {"this": 0, "last": -1, "next": 1}[mode]
        if what in ("week", "month", "year") and self.w(j + 1) != "of":  # "last week of May"
            return _M(*_unit_of(_shift(t, what, step), what), j + 1, what)
        if what == "weekend":
            saturday = _unit_of(t, "week")[0] + timedelta(days=7 * step + 5)
            return _M(saturday, saturday + timedelta(days=2), j + 1, "range")
        if what in _DAY_PARTS and mode != "next":
            d = t - _DAY if mode == "last" else t  # "last night" is yesterday's
            return _M(d, d + _DAY, j + 1, "day")
        if what in _WEEKDAYS:
            return self.weekday(_WEEKDAYS[what], mode, j + 1)
        name = self.name(j)
        if name is not None:
            return self.named(name[0], mode, name[1], name[2])
        counted = self.count(j) if mode != "this" else None
        if counted and self.w(counted[1]) in _UNITS:  # "last 3 days", "next two weeks"
            n, k, unit = *counted, _UNITS[self.w(counted[1])]
            if mode == "last":
                return _M(_shift(t, unit, -n), t + _DAY, k + 1, "range")
            return _M(t + _DAY, _shift(t + _DAY, unit, n), k + 1, "range")
        return None

    def name(self, j: int) -> tuple[_Instance, int, str] | None:
        """A month, season or holiday name at j: its instance in a given year."""
        month = self.month(j)
        if month is not None:
            m = month[0]
            return (lambda y: _unit_of(date(y, m, 1), "month")), month[1], "month"
        if self.w(j) in _SEASONS:
            s = _SEASONS[self.w(j)]
            return (lambda y: (date(y, s, 1), _shift(date(y, s, 1), "month", 3))), j + 1, "season"
        holiday = self.holiday(j)
        if holiday is not None:
            (hm, hd), k = holiday
            return (lambda y: _day(y, hm, hd)), k, "day"
        return None

    def named(self, inst: _Instance, mode: str, j: int, unit: str) -> _M | None:
        """The instance of a yearly name (May, summer, Christmas) that the mode picks."""
        t = self.today
        span = _latest(inst, t, 1 if mode == "last" else 0)
        if mode == "this" and (span is None or span[1] <= t):  # none under way
            span = inst(t.year)
        elif mode == "next":
            span = next((s for y in range(t.year, t.year + 9) if (s := inst(y)) and s[0] > t), None)
        if span is None:  # 31 April
            return None
        return _M(*span, j, unit, partial(_latest, inst) if mode == "" else None)

    def weekday(self, wd: int, mode: str, j: int) -> _M:
        t = self.today
        if mode == "last":
            d = t - timedelta(days=(t.weekday() - wd - 1) % 7 + 1)
        elif mode == "next":
            d = t + timedelta(days=(wd - t.weekday() - 1) % 7 + 1)
        else:
            d = t - timedelta(days=(t.weekday() - wd) % 7)

        def latest(bound: date) -> _Span:
            b = bound - timedelta(days=(bound.weekday() - wd) % 7)
            return b, b + _DAY

        return _M(d, d + _DAY, self.skip_part(j), "day", latest if mode != "next" else None)

    def ago(self, i: int) -> _M | None:
        counted = self.count(i)
        if counted is None:
            return None
        n, j = counted
        unit = _UNITS.get(self.w(j))
        if unit is None or self.w(j + 1) != "ago":
            return None
        return _M(*_unit_of(_shift(self.today, unit, -n), unit), j + 2, unit)

    def rolling(self, i: int) -> _M | None:
        j = i + (self.w(i) in ("over", "within", "for"))
        the = self.w(j) == "the"
        j += the
        if not (self.w(j) == "past" or (the and self.w(j) == "last")):
            return None
        n, j = self.count(j + 1) or (1, j + 1)
        unit = _UNITS.get(self.w(j))
        if unit is None or self.w(j + 1) == "of":  # "the last week of June" is not rolling
            return None
        return _M(_shift(self.today, unit, -n), self.today + _DAY, j + 1, "range")

    def earlier(self, i: int) -> _M | None:
        w, nxt = self.w(i), self.w(i + 1)
        if w not in ("earlier", "later"):
            return None
        if nxt == "today":
            unit, j = "day", i + 2
        elif nxt == "this" and self.w(i + 2) in ("week", "month", "year"):
            unit, j = self.w(i + 2), i + 3
        else:
            return None
        lo, hi = _unit_of(self.today, unit)
        tomorrow = self.today + _DAY
        if w == "earlier":
            return _M(lo, tomorrow, j, "range", to_now=True)
        return _M(tomorrow, hi, j, "range") if tomorrow < hi else None

    def calendar(self, i: int, ctx: bool) -> _M | None:
        """Dates, months, years, seasons, holidays, decades and weekdays."""
        if self.w(i) in _WEEKDAYS:  # "Sunday, May 7" is the date; "on Sunday" the weekday
            k = i + 1 + (self.w(i + 1) == ",")
            full = _longest(self.day_first(k), self.month_first(k, False))
            if full is not None and full.unit == "day":
                return full
            return self.weekday(_WEEKDAYS[self.w(i)], "", i + 1) if ctx else None
        c = self.c(i)
        return _longest(
            self.day_first(i) if c in "TNO" else None,
            self.month_first(i, ctx) if c == "M" else None,
            self.year(i, ctx) if c in "TUN" else None,
            self.season(i, ctx) if c in "TS" else None,
            self.holiday_date(i) if c in "Rh" else None,
            self.decade(i) if c in "TND" else None,
        )

    def day_first(self, i: int) -> _M | None:  # "7 May 2023", "the 7th of May"
        j = i + (self.w(i) == "the")
        day = self.day_num(j)
        month = self.month(j + 1 + (self.w(j + 1) == "of")) if day else None
        return self.month_day(month[0], day, month[1]) if day and month else None

    def month_first(self, i: int, ctx: bool) -> _M | None:  # "May 7, 2023", "May 2023"
        month = self.month(i)
        if month is None:
            return None
        m, j = month
        day = self.day_num(j)
        if day is not None:
            return self.month_day(m, day, j + 1)
        year = self.year_after(j)
        if year is not None:
            return _M(*_unit_of(date(year[0], m, 1), "month"), year[1], "month")
        return (
            self.named(lambda y: _unit_of(date(y, m, 1), "month"), "", j, "month") if ctx else None
        )

    def month_day(self, m: int, d: int, j: int) -> _M | None:
        year = self.year_after(j)
        if year is None:
            return self.named(lambda y: _day(y, m, d), "", j, "day")
        span = _day(year[0], m, d)
        return _M(*span, year[1], "day") if span else None

    def year(self, i: int, ctx: bool) -> _M | None:
        j = i
        if self.w(i) == "the" and self.w(i + 1) == "year":  # "the year 2022" is a year
            j, ctx = i + 2, True
        elif self.w(i) == "year" and ctx:  # "in year 2022"
            j = i + 1
        y = self.year_num(j) if ctx else None
        return _M(date(y, 1, 1), date(y + 1, 1, 1), j + 1, "year") if y else None

    def season(self, i: int, ctx: bool) -> _M | None:
        j = i + (self.w(i) == "the")
        name = self.name(j) if self.w(j) in _SEASONS else None
        if name is None:
            return None
        year = self.year_after(j + 1)
        if year is None:
            return self.named(name[0], "", j + 1, "season") if ctx else None
        span = name[0](year[0])
        return _M(*span, year[1], "season") if span else None

    def holiday_date(self, i: int) -> _M | None:
        holiday = self.holiday(i)
        return self.month_day(*holiday[0], holiday[1]) if holiday else None

    def decade(self, i: int, the: bool = False) -> _M | None:  # "the 1990s", "the '90s"
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
        return _M(date(y, 1, 1), date(y + 10, 1, 1), k, "decade")

    def part(self, i: int) -> _M | None:
        """early / mid / late X, the beginning / middle / end of X and the first / last week
        of X, X a month or year."""
        w, nxt = self.w(i), self.w(i + 1)
        if w in ("early", "mid", "late") and nxt != "the":
            p, j = _PARTS[w], i + 1 + (nxt == "-")
        elif w == "the" and nxt in ("early", "mid", "late"):  # "the late 90s"
            p, j = _PARTS[nxt], i + 2 + (self.w(i + 2) == "-")
        elif w == "the" and nxt in _PARTS and self.w(i + 2) == "of":
            p, j = _PARTS[nxt], i + 3
        elif w in _PARTS and nxt == "of":
            p, j = _PARTS[w], i + 2
        elif (
            w == "the" and nxt in ("first", "last") and self.words[i + 2 : i + 4] == ["week", "of"]
        ):
            p, j = 3 if nxt == "first" else 4, i + 4
        else:
            return None
        m = _longest(self.calendar(j, True), self.modified(j), self.decade(j, w == "the"))
        span = _piece(m.lo, m.hi, m.unit, p) if m else None
        if m is None or span is None:
            return None
        whole = m.redo

        def redo(bound: date) -> _Span | None:
            again = whole(bound) if whole else None
            return _piece(*again, m.unit, p) if again else None

        return _M(*span, m.j, "range", redo if whole else None)

    # -- single tokens --

    def skip_part(self, j: int) -> int:  # "Friday night", "yesterday morning"
        return j + (self.w(j) in _DAY_PARTS)

    def count(self, i: int) -> tuple[int, int] | None:
        w, nxt = self.w(i), self.w(i + 1)
        if w in ("a", "an"):
            if nxt == "few":
                return 3, i + 2
            if nxt == "couple":
                return 2, i + 2 + (self.w(i + 2) == "of")
            return 1, i + 1
        if w == "few":
            return 3, i + 1
        if w == "couple":
            return 2, i + 1 + (nxt == "of")
        if w in _NUMBERS:
            return _NUMBERS[w], i + 1
        n = self.num(i) if self.c(i) == "N" else 0
        return (n, i + 1) if n > 0 else None

    def num(self, i: int) -> int:
        """The value of a number, ordinal or decade token; -1 for anything else."""
        digits = self.w(i).rstrip("abcdefghijklmnopqrstuvwxyz")
        # int() of a huge digit string is slow (and refused past 4300 digits)
        return int(digits) if self.c(i) in "NOD" and 0 < len(digits) <= 9 else -1

    def day_num(self, i: int) -> int | None:
        n = self.num(i) if self.c(i) in ("N", "O") else -1
        return n if 1 <= n <= 31 else None

    def month(self, i: int) -> tuple[int, int] | None:
        w = self.w(i)
        if w not in _MONTHS:
            return None
        return _MONTHS[w], i + 1 + (w in _MONTH_ABBR and self.w(i + 1) == ".")  # "Sept."

    def year_num(self, i: int) -> int | None:
        if self.c(i) != "N" or len(self.w(i)) != 4 or self.w(i + 1) in _COUNTED:
            return None
        return self.num(i) if 1900 <= self.num(i) <= 2100 else None

    def year_after(self, j: int) -> tuple[int, int] | None:  # "May 7, 2023", "summer of 2022"
        k = j + (self.w(j) in (",", "of"))
        y = self.year_num(k)
        return (y, k + 1) if y else None

    def holiday(self, i: int) -> tuple[tuple[int, int], int] | None:
        if self.c(i) not in "Rh":
            return None
        for key, md in _HOLIDAYS.items():  # longest keys come first
            if tuple(self.words[i : i + len(key)]) == key:
                return md, i + len(key)
        return None


def parse_times(
    text: str, now: datetime, anchors: Mapping[str, datetime] | None = None
) -> list[TimeRange]:
    """All time expressions in `text`, left to right, non-overlapping (longest match wins).

    `now` must be timezone-aware; `anchors` maps lower-cased event phrases ("the trip") to
    a datetime, for "the week before the trip"."""
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    parser = _Parser(text, now, anchors or {})
    return parser.parse(m.start() for m in _CANDIDATE.finditer(parser.sig))


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
