"""What recall reads in a query's words: its BM25 terms (lower-cased, stopwords out) and
the Lucene query built of them, whether it asks for an inference, and the one speaker it
names (``fusion.py`` and ``weights.py`` act on these).
"""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we
    were what when where which while who whom why will with would you your yours yourself
    yourselves""".split()
)
_TOKEN = re.compile(r"[a-z0-9]+")
#: words that make a question ask for an inference (``asks_inference``)
_INFERENCE = frozenset({"would", "might", "likely", "unlikely", "probably"})


def terms(text: str) -> list[str]:
    """Lower-cased alphanumeric tokens without stopwords (safe inside a Lucene query)."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower()):
        if token not in STOPWORDS:
            seen.setdefault(token, None)
    return list(seen)


def lucene_query(text: str, scope: str) -> str | None:
    """BM25 over the query's terms, restricted to documents carrying every token of
    ``scope`` (``models.query_scope_tokens``; none for a whole tenant's index). The scope
    clauses are boosted by 0: they filter without scoring, since a matching clause would
    add the same constant to every hit and squash the normalised BM25 scores fusion
    relies on."""
    words = terms(text)
    if not words:
        return None
    query = f"content:({' OR '.join(words)})"
    required = " AND ".join(f"scopeToken:{token}^0" for token in scope.split())
    return f"{query} AND {required}" if required else query


def asks_inference(query: str) -> bool:
    """Whether a question asks what someone would or might do, or is likely to: an
    inference from what they said ("Would Melanie enjoy Vivaldi?", answered by "I love
    classical music"), rather than a fact they stated."""
    return not _INFERENCE.isdisjoint(_TOKEN.findall(query.lower()))


def named_speaker(query: str, speakers: set[str]) -> str | None:
    """The one of ``speakers`` whose every word the query has ("what does Melanie
    like?"), or None: none, or several (a question about two people favours neither)."""
    words = set(_TOKEN.findall(query.lower()))
    named = [s for s in speakers if (mine := _TOKEN.findall(s)) and words.issuperset(mine)]
    return named[0] if len(named) == 1 else None
