"""The words BM25 counts, as graphmem counts them itself for a scope held in memory
(``memory/search/scopeview.py``): lower-cased word tokens, English possessives and stopwords
dropped, Porter-stemmed, each stem hashed to 32 bits.

Lucene's fulltext index scores with the statistics of the whole index, which is the
tenant's: one user's words move another user's BM25 scores. A scope held in memory is
scored with its own statistics instead, so a user's ranking depends only on what the user
can see (docs/recall.md, "BM25 inside the scope"). The analysis mirrors Lucene's English
analyzer (standard tokens, possessive filter, its stopword set, the Porter stemmer), so
the two agree on what a word is; the hashes are stored on each memory (``termBytes``,
written with the memory, ``memory/writepath/analysis.py``) so that building a view costs
one ``frombuffer``, not an analysis of every text.

A hash collision merges two stems' counts inside one scope; with 32 bits and a scope's
vocabulary of tens of thousands of stems that is rare, and it can only move that scope's
own scores.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt
import Stemmer

U32 = npt.NDArray[np.uint32]

#: Bump when the analysis changes (this module's, or what else ``analysis.analysed`` derives
#: from a memory's text): memories analysed by another version are analysed again by
#: ``Memory.backfill_terms`` and, until then, their scope is searched through Lucene.
#: 2: memories carry their ``speaker``.
VERSION = 2

#: Lucene's English stopword set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET): what a
#: document's length does not count.
DOCUMENT_STOPWORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the
    their then there these they this to was will with""".split()
)

# Letters and digits, with inner apostrophes kept as Lucene's standard tokenizer keeps
# them ("don't" is one word). Linear: no nested quantifiers.
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_stemmer = Stemmer.Stemmer("porter")


def words(text: str) -> list[str]:
    """Lower-cased word tokens, a trailing possessive ``'s`` removed."""
    out = []
    for word in _WORD.findall(text.lower()):
        if word.endswith(("'s", "\u2019s")):
            word = word[:-2]
        out.append(word)
    return out


def stems(tokens: Iterable[str], stopwords: frozenset[str] = DOCUMENT_STOPWORDS) -> list[str]:
    return list(_stemmer.stemWords([t for t in tokens if t not in stopwords]))


def hashes(stemmed: Iterable[str]) -> U32:
    return np.fromiter((zlib.crc32(s.encode("utf-8")) for s in stemmed), dtype=np.uint32)


def term_bytes(content: str) -> bytes:
    """A memory's terms as stored (``termBytes``): each stem's hash, uint32 little-endian,
    in text order."""
    return hashes(stems(words(content))).astype("<u4").tobytes()


def query_hashes(text: str, stopwords: frozenset[str]) -> U32:
    """A query's distinct terms, without ``stopwords`` (the query's own list, longer than
    a document's: words like "what" or "did" would match half a conversation)."""
    seen = dict.fromkeys(stems(words(text), DOCUMENT_STOPWORDS | stopwords))
    return hashes(seen)
