"""English time expressions resolved to ranges (graphmem/memory/search/timeexpr.py).

Every case is resolved against NOW, Wednesday 15 May 2024 14:30 UTC, whose ISO week runs
from Monday 13 to Monday 20 May. Expected ranges are written out by hand.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from graphmem.memory.search.timeexpr import TimeRange, _Parser, overlap_days, parse_times

NOW = datetime(2024, 5, 15, 14, 30, tzinfo=UTC)
MIN = datetime.min.replace(tzinfo=UTC)
MAX = datetime.max.replace(tzinfo=UTC)
ANCHORS = {
    "the trip": datetime(2023, 6, 9, 10, 0, tzinfo=UTC),  # a Friday
    "my birthday": datetime(2024, 3, 2, 18, 0, tzinfo=UTC),
}


def d(y: int, m: int, day: int) -> datetime:
    return datetime(y, m, day, tzinfo=UTC)


# (expression, start, end): the whole input is the expression
CASES: list[tuple[str, datetime, datetime]] = [
    # -- absolute --
    ("in 2022", d(2022, 1, 1), d(2023, 1, 1)),
    ("during 2020", d(2020, 1, 1), d(2021, 1, 1)),
    ("the year 2019", d(2019, 1, 1), d(2020, 1, 1)),
    ("May 2023", d(2023, 5, 1), d(2023, 6, 1)),
    ("May, 2023", d(2023, 5, 1), d(2023, 6, 1)),
    ("May of 2023", d(2023, 5, 1), d(2023, 6, 1)),
    ("in July 2023", d(2023, 7, 1), d(2023, 8, 1)),
    ("in May", d(2024, 5, 1), d(2024, 6, 1)),  # now's month: this year's
    ("in June", d(2023, 6, 1), d(2023, 7, 1)),  # still ahead this year: last year's
    ("7 May 2023", d(2023, 5, 7), d(2023, 5, 8)),
    ("7th May 2023", d(2023, 5, 7), d(2023, 5, 8)),
    ("May 7, 2023", d(2023, 5, 7), d(2023, 5, 8)),
    ("May 7th", d(2024, 5, 7), d(2024, 5, 8)),
    ("May 20th", d(2023, 5, 20), d(2023, 5, 21)),  # ahead of today: last year's
    ("on the 7th of May 2023", d(2023, 5, 7), d(2023, 5, 8)),
    ("the 23rd of March", d(2024, 3, 23), d(2024, 3, 24)),
    ("2023-05-07", d(2023, 5, 7), d(2023, 5, 8)),
    ("Sept. 5, 2023", d(2023, 9, 5), d(2023, 9, 6)),
    ("Sep 2022", d(2022, 9, 1), d(2022, 10, 1)),
    ("Jan 3rd, 2024", d(2024, 1, 3), d(2024, 1, 4)),
    ("Sunday, May 7, 2023", d(2023, 5, 7), d(2023, 5, 8)),
    ("on Friday, 9 June 2023", d(2023, 6, 9), d(2023, 6, 10)),
    ("February 29", d(2024, 2, 29), d(2024, 3, 1)),
    ("early 2022", d(2022, 1, 1), d(2022, 5, 1)),
    ("mid-2022", d(2022, 5, 1), d(2022, 9, 1)),
    ("late 2022", d(2022, 9, 1), d(2023, 1, 1)),
    ("in early 2021", d(2021, 1, 1), d(2021, 5, 1)),
    ("early May", d(2024, 5, 1), d(2024, 5, 11)),
    ("mid June 2023", d(2023, 6, 11), d(2023, 6, 21)),
    ("late May 2023", d(2023, 5, 21), d(2023, 6, 1)),
    ("the beginning of 2023", d(2023, 1, 1), d(2023, 5, 1)),
    ("the end of last year", d(2023, 9, 1), d(2024, 1, 1)),
    ("early this month", d(2024, 5, 1), d(2024, 5, 11)),
    ("the first week of June 2023", d(2023, 6, 1), d(2023, 6, 8)),
    ("the last week of June 2023", d(2023, 6, 24), d(2023, 7, 1)),
    ("the 1990s", d(1990, 1, 1), d(2000, 1, 1)),
    ("the early 1990s", d(1990, 1, 1), d(1994, 1, 1)),
    ("in the mid-1980s", d(1984, 1, 1), d(1987, 1, 1)),
    ("the late 90s", d(1997, 1, 1), d(2000, 1, 1)),
    ("in the 1980's", d(1980, 1, 1), d(1990, 1, 1)),
    ("the '90s", d(1990, 1, 1), d(2000, 1, 1)),
    ("the 20s", d(2020, 1, 1), d(2030, 1, 1)),  # latest such decade begun by now
    ("the 30s", d(1930, 1, 1), d(1940, 1, 1)),
    ("summer 2022", d(2022, 6, 1), d(2022, 9, 1)),
    ("the summer of 2021", d(2021, 6, 1), d(2021, 9, 1)),
    ("winter 2022", d(2022, 12, 1), d(2023, 3, 1)),
    ("in the fall", d(2023, 9, 1), d(2023, 12, 1)),
    ("last summer", d(2023, 6, 1), d(2023, 9, 1)),
    ("last winter", d(2023, 12, 1), d(2024, 3, 1)),
    ("this spring", d(2024, 3, 1), d(2024, 6, 1)),
    ("this winter", d(2024, 12, 1), d(2025, 3, 1)),  # none under way: the one of now's year
    ("next summer", d(2024, 6, 1), d(2024, 9, 1)),
    ("Christmas 2022", d(2022, 12, 25), d(2022, 12, 26)),
    ("last Christmas", d(2023, 12, 25), d(2023, 12, 26)),
    ("New Year's Eve", d(2023, 12, 31), d(2024, 1, 1)),
    ("last May", d(2023, 5, 1), d(2023, 6, 1)),  # this May is not over
    ("next March", d(2025, 3, 1), d(2025, 4, 1)),
    # -- relative --
    ("today", d(2024, 5, 15), d(2024, 5, 16)),
    ("yesterday", d(2024, 5, 14), d(2024, 5, 15)),
    ("tomorrow", d(2024, 5, 16), d(2024, 5, 17)),
    ("tonight", d(2024, 5, 15), d(2024, 5, 16)),
    ("this morning", d(2024, 5, 15), d(2024, 5, 16)),
    ("last night", d(2024, 5, 14), d(2024, 5, 15)),
    ("yesterday afternoon", d(2024, 5, 14), d(2024, 5, 15)),
    ("this week", d(2024, 5, 13), d(2024, 5, 20)),
    ("last week", d(2024, 5, 6), d(2024, 5, 13)),
    ("next week", d(2024, 5, 20), d(2024, 5, 27)),
    ("this past week", d(2024, 5, 6), d(2024, 5, 13)),
    ("this month", d(2024, 5, 1), d(2024, 6, 1)),
    ("last month", d(2024, 4, 1), d(2024, 5, 1)),
    ("next month", d(2024, 6, 1), d(2024, 7, 1)),
    ("this year", d(2024, 1, 1), d(2025, 1, 1)),
    ("last year", d(2023, 1, 1), d(2024, 1, 1)),
    ("next year", d(2025, 1, 1), d(2026, 1, 1)),
    ("this weekend", d(2024, 5, 18), d(2024, 5, 20)),
    ("last weekend", d(2024, 5, 11), d(2024, 5, 13)),
    ("this past weekend", d(2024, 5, 11), d(2024, 5, 13)),
    ("next weekend", d(2024, 5, 25), d(2024, 5, 27)),
    ("3 days ago", d(2024, 5, 12), d(2024, 5, 13)),
    ("two weeks ago", d(2024, 4, 29), d(2024, 5, 6)),
    ("a month ago", d(2024, 4, 1), d(2024, 5, 1)),
    ("a couple of years ago", d(2022, 1, 1), d(2023, 1, 1)),
    ("a few days ago", d(2024, 5, 12), d(2024, 5, 13)),
    ("twelve months ago", d(2023, 5, 1), d(2023, 6, 1)),
    ("in the past 3 days", d(2024, 5, 12), d(2024, 5, 16)),
    ("over the last 2 weeks", d(2024, 5, 1), d(2024, 5, 16)),
    ("the past week", d(2024, 5, 8), d(2024, 5, 16)),
    ("in the past few months", d(2024, 2, 15), d(2024, 5, 16)),
    ("the last year", d(2023, 5, 15), d(2024, 5, 16)),
    ("last 10 days", d(2024, 5, 5), d(2024, 5, 16)),
    ("for the past couple of weeks", d(2024, 5, 1), d(2024, 5, 16)),
    ("next 3 days", d(2024, 5, 16), d(2024, 5, 19)),
    ("recently", d(2024, 4, 15), d(2024, 5, 16)),
    ("lately", d(2024, 4, 15), d(2024, 5, 16)),
    ("earlier this year", d(2024, 1, 1), NOW),
    ("earlier this month", d(2024, 5, 1), NOW),
    ("earlier this week", d(2024, 5, 13), NOW),
    ("earlier today", d(2024, 5, 15), NOW),
    ("later this week", d(2024, 5, 16), d(2024, 5, 20)),
    ("last Friday", d(2024, 5, 10), d(2024, 5, 11)),
    ("on Friday", d(2024, 5, 10), d(2024, 5, 11)),
    ("this Friday", d(2024, 5, 10), d(2024, 5, 11)),
    ("next Friday", d(2024, 5, 17), d(2024, 5, 18)),
    ("on Wednesday", d(2024, 5, 15), d(2024, 5, 16)),  # today is one
    ("last Wednesday", d(2024, 5, 8), d(2024, 5, 9)),  # strictly before today
    ("next Wednesday", d(2024, 5, 22), d(2024, 5, 23)),
    ("on Friday night", d(2024, 5, 10), d(2024, 5, 11)),
    ("last Tues", d(2024, 5, 14), d(2024, 5, 15)),
    # -- ranges --
    ("between May and July 2023", d(2023, 5, 1), d(2023, 8, 1)),
    ("between 1 May and 3 May 2023", d(2023, 5, 1), d(2023, 5, 4)),
    ("from 2019 to 2021", d(2019, 1, 1), d(2022, 1, 1)),
    ("from March to May", d(2024, 3, 1), d(2024, 6, 1)),
    ("from March to June", d(2023, 3, 1), d(2023, 7, 1)),  # June is still ahead
    ("from November to February", d(2023, 11, 1), d(2024, 3, 1)),
    ("from last week until today", d(2024, 5, 6), d(2024, 5, 16)),
    ("since 2020", d(2020, 1, 1), NOW),
    ("since last month", d(2024, 4, 1), NOW),
    ("since yesterday", d(2024, 5, 14), NOW),
    ("before 2021", MIN, d(2021, 1, 1)),
    ("prior to 2020", MIN, d(2020, 1, 1)),
    ("after March 2023", d(2023, 4, 1), NOW),
    ("after next week", d(2024, 5, 27), MAX),  # not over yet: open end
    ("until June", MIN, d(2023, 7, 1)),
    ("up until last year", MIN, d(2024, 1, 1)),
    ("by the end of 2022", MIN, d(2023, 1, 1)),
    ("by Friday", MIN, d(2024, 5, 11)),
    # -- anchored --
    ("the week before 9 June 2023", d(2023, 6, 2), d(2023, 6, 9)),
    ("the day after 9 June 2023", d(2023, 6, 10), d(2023, 6, 11)),
    ("the month before 9 June 2023", d(2023, 5, 9), d(2023, 6, 9)),
    ("two days before 9 June 2023", d(2023, 6, 7), d(2023, 6, 8)),
    ("3 weeks after 1 June 2023", d(2023, 6, 16), d(2023, 6, 23)),
    ("the weekend before 9 June 2023", d(2023, 6, 3), d(2023, 6, 5)),
    ("the weekend after 9 June 2023", d(2023, 6, 10), d(2023, 6, 12)),
    ("the Sunday before 25 May 2023", d(2023, 5, 21), d(2023, 5, 22)),
    ("the Friday after 25 May 2023", d(2023, 5, 26), d(2023, 5, 27)),
    ("the Thursday before 25 May 2023", d(2023, 5, 18), d(2023, 5, 19)),
    ("the day after yesterday", d(2024, 5, 15), d(2024, 5, 16)),
    ("the day before yesterday", d(2024, 5, 13), d(2024, 5, 14)),
    ("the week after last Christmas", d(2023, 12, 26), d(2024, 1, 2)),
    ("the day before the week after 9 June 2023", d(2023, 6, 9), d(2023, 6, 10)),
    ("the week of 23 August 2023", d(2023, 8, 21), d(2023, 8, 28)),
    ("the weekend of 9 June 2023", d(2023, 6, 10), d(2023, 6, 12)),
]

# anchors: an anchor's datetime stands for its whole day
ANCHORED: list[tuple[str, datetime, datetime]] = [
    ("the week before the trip", d(2023, 6, 2), d(2023, 6, 9)),
    ("the two weeks before the trip", d(2023, 5, 26), d(2023, 6, 9)),
    ("the Sunday before the trip", d(2023, 6, 4), d(2023, 6, 5)),
    ("a week after my birthday", d(2024, 3, 3), d(2024, 3, 10)),
    ("before the trip", MIN, d(2023, 6, 9)),
    ("after the trip", d(2023, 6, 10), NOW),
    ("since my birthday", d(2024, 3, 2), NOW),
    ("on my birthday", d(2024, 3, 2), d(2024, 3, 3)),
    ("the week of the trip", d(2023, 6, 5), d(2023, 6, 12)),
    ("between my birthday and today", d(2024, 3, 2), d(2024, 5, 16)),
]


@pytest.mark.parametrize(("text", "start", "end"), CASES)
def test_expression(text: str, start: datetime, end: datetime) -> None:
    assert parse_times(text, NOW) == [TimeRange(start, end, text, (0, len(text)))]


@pytest.mark.parametrize(("text", "start", "end"), ANCHORED)
def test_anchored_expression(text: str, start: datetime, end: datetime) -> None:
    assert parse_times(text, NOW, ANCHORS) == [TimeRange(start, end, text, (0, len(text)))]


def test_enough_distinct_expressions() -> None:
    assert len({text.lower() for text, _, _ in CASES + ANCHORED}) >= 60


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Hello there, how are you?",
        "I have 3 dogs",
        "I walked 2000 steps",
        "2022 people came",  # a bare number is a year only in a time context
        "we counted in 2000 steps",  # in a time context, but it counts steps
        "by 1999 votes",
        "May I ask you something?",  # bare month names are words too
        "They will march on.",
        "June is my sister",
        "I teach sunday school",  # bare weekdays too
        "Friday night was fun",
        "the fall of Rome",  # a bare season is not a date either
        "2023-13-45",  # no such day
        "April 31, 2023",
        "30 February",
        "9999 years ago",  # before the calendar begins
        "99999999999999999999 days ago",
        "the the the in in on of by since",
        "a a few a couple of",
    ],
)
def test_no_time_expression(text: str) -> None:
    assert parse_times(text, NOW) == []


def test_expressions_inside_questions() -> None:
    found = parse_times("What did Caroline do last week?", NOW)
    assert [(r.text, r.span, r.start, r.end) for r in found] == [
        ("last week", (21, 30), d(2024, 5, 6), d(2024, 5, 13))
    ]
    found = parse_times("When did Mel go camping in July 2023?", NOW)
    assert [(r.text, r.span) for r in found] == [("in July 2023", (24, 36))]
    assert (found[0].start, found[0].end) == (d(2023, 7, 1), d(2023, 8, 1))


def test_conversation_timestamps() -> None:
    # how LoCoMo dates its sessions: the clock time is not an expression, the date is
    [r] = parse_times("1:56 pm on 8 May, 2023", NOW)
    assert (r.text, r.start, r.end) == ("on 8 May, 2023", d(2023, 5, 8), d(2023, 5, 9))


def test_several_expressions_left_to_right() -> None:
    text = "We met last week, again 3 days ago, and we'll meet next Friday."
    found = parse_times(text, NOW)
    assert [r.text for r in found] == ["last week", "3 days ago", "next Friday"]
    assert all(text[r.span[0] : r.span[1]] == r.text for r in found)


def test_longest_match_wins() -> None:
    # not "May 7" then "2023", nor "last week" inside the anchored expression
    assert [r.text for r in parse_times("on May 7, 2023 we left", NOW)] == ["on May 7, 2023"]
    found = parse_times("the week before last week", NOW)
    assert [(r.text, r.start, r.end) for r in found] == [
        ("the week before last week", d(2024, 4, 29), d(2024, 5, 6))
    ]


def test_context_words_make_dates() -> None:
    assert [r.text for r in parse_times("May I ask about May 2023 and in May?", NOW)] == [
        "May 2023",
        "in May",
    ]
    # a comma before a counted noun: the year goes, the month stays
    assert [r.text for r in parse_times("in May, 2023 people came", NOW)] == ["in May"]
    assert [r.text for r in parse_times("we go to sunday school on Sunday", NOW)] == ["on Sunday"]


def test_case_and_punctuation() -> None:
    [r] = parse_times("WHAT HAPPENED LAST WEEK", NOW)
    assert (r.text, r.start) == ("LAST WEEK", d(2024, 5, 6))
    [r] = parse_times("It was on Sept 5th , 2023.", NOW)
    assert (r.text, r.start, r.end) == ("on Sept 5th , 2023", d(2023, 9, 5), d(2023, 9, 6))
    [r] = parse_times("new year\u2019s eve", NOW)  # a typographic apostrophe
    assert r.start == d(2023, 12, 31)


def test_possessives_and_contractions() -> None:
    found = parse_times("Was last year's trip better than yesterday's?", NOW)
    assert [(r.text, r.start) for r in found] == [
        ("last year", d(2023, 1, 1)),
        ("yesterday", d(2024, 5, 14)),
    ]
    [r] = parse_times("Valentine's Day 2023", NOW)
    assert (r.text, r.start, r.end) == ("Valentine's Day 2023", d(2023, 2, 14), d(2023, 2, 15))
    assert parse_times("I don't know, it's May's garden", NOW) == []


def test_ranges_keep_the_timezone_of_now() -> None:
    tz = timezone(timedelta(hours=-5))
    now = datetime(2024, 5, 15, 23, 30, tzinfo=tz)  # already 16 May in UTC
    [r] = parse_times("today", now)
    assert (r.start, r.end) == (datetime(2024, 5, 15, tzinfo=tz), datetime(2024, 5, 16, tzinfo=tz))
    assert r.start.tzinfo is tz
    [r] = parse_times("before 2021", now)
    assert r.start == datetime.min.replace(tzinfo=tz)


def test_anchor_in_another_timezone_counts_on_nows_calendar() -> None:
    tz = timezone(timedelta(hours=10))
    # 20:00 UTC on 8 June is 06:00 on 9 June in now's zone
    anchors = {"the trip": datetime(2023, 6, 8, 20, 0, tzinfo=UTC)}
    [r] = parse_times("the day before the trip", datetime(2024, 1, 1, tzinfo=tz), anchors)
    assert r.start == datetime(2023, 6, 8, tzinfo=tz)


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_times("today", datetime(2024, 5, 15))


def test_overlap_days() -> None:
    ranges = parse_times("last week", NOW)  # 6 to 13 May
    assert overlap_days(d(2024, 5, 8), ranges) == 0.0
    assert overlap_days(d(2024, 5, 6), ranges) == 0.0  # the start is inside
    assert overlap_days(d(2024, 5, 13), ranges) == 0.0  # the end is 0 days away
    assert overlap_days(datetime(2024, 5, 4, 12, tzinfo=UTC), ranges) == 1.5
    assert overlap_days(d(2024, 5, 16), ranges) == 3.0
    assert overlap_days(d(2024, 5, 16), []) == math.inf
    # the nearest of several ranges
    both = parse_times("in January 2024 and last week", NOW)
    assert overlap_days(d(2024, 2, 3), both) == 2.0
    # open ranges, and a memory time in another zone
    assert overlap_days(datetime(1, 1, 2, tzinfo=UTC), parse_times("before 2021", NOW)) == 0.0
    later = datetime(2024, 5, 1, 2, tzinfo=timezone(timedelta(hours=2)))  # 00:00 UTC
    assert overlap_days(later, parse_times("after the trip", NOW, ANCHORS)) == 0.0
    assert overlap_days(later, parse_times("before 2021", NOW)) == pytest.approx(1216.0)
    with pytest.raises(ValueError):
        overlap_days(datetime(2024, 5, 8), ranges)


def _sane(text: str, found: list[TimeRange]) -> None:
    last_end = 0
    for r in found:
        assert r.start < r.end
        assert last_end <= r.span[0] < r.span[1]
        assert text[r.span[0] : r.span[1]] == r.text
        last_end = r.span[1]


@pytest.mark.timeout(10)
def test_long_hostile_input_is_parsed() -> None:
    # no regex backtracks and no token starts more than a bounded amount of work, so each
    # of these (up to a megabyte) takes a fraction of a second
    assert parse_times("May " * 100_000, NOW) == []
    assert parse_times("1 " * 250_000, NOW) == []
    assert parse_times("1" * 1_000_000, NOW) == []
    assert parse_times("2023-05-" * 50_000, NOW) == []
    assert parse_times("the " * 100_000, NOW) == []
    text = "the day before " * 5_000 + "today"
    found = parse_times(text, NOW)
    _sane(text, found)
    # nesting stops at two anchored levels, and "before X" is one more
    assert found[-1].text == "before the day before the day before today"
    text = "in May " * 5_000
    found = parse_times(text, NOW)
    assert len(found) == 5_000
    assert {(r.start, r.end) for r in found} == {(d(2024, 5, 1), d(2024, 6, 1))}
    _sane(text, found)


def _words_of(texts: list[str]) -> list[str]:
    return sorted({w for t in texts for w in t.replace(",", " , ").replace(".", " . ").split()})


def test_the_candidate_filter_never_changes_a_result() -> None:
    """parse_times only tries the tokens that a cheap table says may start an expression;
    trying every token must give the same ranges."""
    texts = [t for t, _, _ in CASES + ANCHORED]
    vocab = [*_words_of(texts), "people", "steps", "ago", "s", "'", "-", "x", "of"]
    rng = random.Random(7)
    samples = list(texts)
    for text in texts:  # each expression with one token dropped, doubled or replaced
        words = text.split()
        k = rng.randrange(len(words))
        samples.append(" ".join(words[:k] + words[k + 1 :]))
        samples.append(" ".join([*words[: k + 1], *words[k:]]))
        samples.append(" ".join([*words[:k], rng.choice(vocab), *words[k + 1 :]]))
    samples += [" ".join(rng.choices(vocab, k=rng.randint(1, 9))) for _ in range(3000)]
    for text in samples:
        for anchors in ({}, ANCHORS):
            everywhere = _Parser(text, NOW, anchors)
            assert everywhere.parse(range(everywhere.n)) == parse_times(text, NOW, anchors), text
