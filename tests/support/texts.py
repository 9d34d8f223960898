"""Texts the tests read: LoCoMo-like chat that names people, places and organisations."""

from __future__ import annotations

import itertools

PEOPLE = ["Caroline", "Melanie", "Dmitri Ivanov", "Priya Patel", "John", "Maria Garcia"]
PLACES = ["Paris", "Lisbon", "Boston", "the Grand Canyon", "Kyoto", "Lake Tahoe"]
ORGS = ["Google", "the Red Cross", "Stanford University", "Microsoft", "UNICEF"]
TURNS = [
    "{p}: Hey {q}! I just got back from {l}, it was amazing.",
    "{q}: Wow, {p}! Did you go with your family? I remember you said {o} sent you there.",
    "{p}: Yes, we stayed near {l} for a week. The kids loved the museums.",
    "{q}: That sounds lovely. I've been volunteering at {o} since March.",
    "{p}: I'm so proud of you. How is the new job at {o} going?",
    "{q}: Busy, but good. My manager is from {l}, so we talk about the food a lot.",
    "{p}: Ha! Next summer we're planning a trip to {l} with {q2}.",
]


def conversation(chars: int) -> str:
    """A chat of about ``chars`` characters that names people, places and organisations
    all the way through (LoCoMo-like turns)."""
    out: list[str] = []
    size = 0
    for n in itertools.count():
        turn = TURNS[n % len(TURNS)].format(
            p=PEOPLE[n % len(PEOPLE)],
            q=PEOPLE[(n + 1) % len(PEOPLE)],
            q2=PEOPLE[(n + 3) % len(PEOPLE)],
            l=PLACES[n % len(PLACES)],
            o=ORGS[n % len(ORGS)],
        )
        if size + len(turn) + 1 > chars:
            return " ".join(out)
        out.append(turn)
        size += len(turn) + 1
    raise AssertionError("unreachable")
