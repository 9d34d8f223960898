"""The words of English time expressions and how their input is read (``timeexpr.py``):
the vocabulary (months, weekdays, seasons, holidays, units, counts, the words that make a
date of what follows), the tokenizer, each token's one-letter class and the regex over
those classes that finds where an expression may start, and ``Tokens``, the input as the
grammar's rules read it, with the readers of single tokens (numbers, months, years,
holidays).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import date, datetime
from itertools import accumulate
from operator import add

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
WEEKDAYS = {n: i for i, ns in enumerate(_WEEKDAY_NAMES.split("|")) for n in ns.split()}
SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
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
UNITS = {u + s: u for u in ("day", "week", "month", "year") for s in ("", "s")}
_NUMBER_WORDS = "one two three four five six seven eight nine ten eleven twelve"
_NUMBERS = {w: i for i, w in enumerate(_NUMBER_WORDS.split(), 1)}
DAY_OFFSETS = {"today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1}
DAY_PARTS = {"morning", "afternoon", "evening", "night"}
MODES = {"this": "this", "last": "last", "next": "next", "coming": "next"}
PARTS = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}
PREPS = {"in", "during", "throughout", "of", "on"}  # make the next year or name a date
OPS = {"since": "since", "after": "after", "before": "before", "until": "until"}
OPS |= {"till": "until", "til": "until", "by": "until"}
# a number followed by one of these counts things ("in 2000 steps"), it is not a year
_COUNTED = set(
    "people persons steps dollars euros pounds miles km kilometers meters feet words pages "
    "times points votes calories items users members students copies followers views likes "
    "years days hours minutes".split()
)

# Every token gets a one-character class, and a regex over the classes of a token and the
# next one finds where an expression may start: at C speed, so that a megabyte of words
# ("May May May ...", "1 1 1 ...") costs no Python per token. The table is a superset of
# what the grammar accepts (a test compares parsing with and without it).
_CLASS_WORDS = {
    "M": " ".join(_MONTHS), "W": " ".join(WEEKDAYS), "S": " ".join(SEASONS),
    "U": " ".join(UNITS), "G": "weekend", "h": "new valentine", "T": "the", "A": "a an",
    "R": "today tonight yesterday tomorrow recently lately christmas halloween",
    "C": "few couple " + _NUMBER_WORDS, "X": "this last next coming past first",
    "E": "early mid late", "B": "beginning start middle end", "L": "earlier later",
    "V": "over within for", "P": " ".join(PREPS), "Q": " ".join(OPS), "F": "from between",
    "q": "prior up", "t": "to and through thru", "z": " ".join(DAY_PARTS),
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
CANDIDATE = re.compile(
    "[IRD]|[PQF](?=[^_,.'\\-tzPQFq])|"  # whole by themselves | in, since, from + a time
    + "|".join(f"{a}(?=[{re.escape(b)}])" for a, b in _FOLLOW.items())
)
_MAX_ANCHOR_WORDS = 12
_PAD = 16


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


class Tokens:
    """The input as the rules read it: lower-cased tokens and their classes (padded, so
    that a rule may look past the end), the anchors' phrases, and today."""

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

    # -- single tokens --

    def skip_part(self, j: int) -> int:  # "Friday night", "yesterday morning"
        return j + (self.w(j) in DAY_PARTS)

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
