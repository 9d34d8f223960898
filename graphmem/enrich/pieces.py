"""Text as spaCy reads it: in pieces of bounded size, with runs that make its tokenizer
slow read as spaces, so that NER costs about the same per character whatever the text.

spaCy's tokenizer takes a whitespace-delimited chunk apart one prefix or suffix at a time,
matching its affix patterns against the rest of the chunk at each step: a chunk of n such
characters costs about n² (``"(" * 20000`` took 59 s, ``"'s" * 10000`` 42 s, as much
emoji 55 s; ``"(" * 200`` 8 ms). So before spaCy sees a text:

- a run of punctuation, symbols or emoji (and combining marks) longer than
  ``MAX_SYMBOL_RUN`` keeps its first characters and the rest become spaces;
- a run without whitespace longer than ``MAX_WORD`` gets a space every ``MAX_WORD``
  characters at most, in place of its last non-word character before the cut (else of
  the character at the cut): ``"'s's's..."`` is read in words of 64 characters;
- a text longer than ``CHUNK_CHARS`` is read in pieces of at most that many characters,
  cut after a sentence end (else at whitespace) in the second half of the piece. Each
  piece is read with up to ``CONTEXT`` characters of its neighbours on either side, and
  keeps the mentions that start in it: NER labels a name by the words around it, and a
  name just before a cut would otherwise be read without the words after it.

Every replacement is one character for one, so offsets into the neutralised text are
offsets into the original, and a mention's surface is read from the original. Prose
keeps its entities: runs like these do not occur in it, and the context read across a
cut is wider than what NER looks at (tests/unit/enrich/test_ner.py compares the
entities of a 20 KB conversation read whole and in pieces).
"""

from __future__ import annotations

import re

#: punctuation, symbols or emoji in a row kept as they are ("...", "?!", "!!!!")
MAX_SYMBOL_RUN = 4
#: characters without whitespace spaCy reads as one chunk, at most
MAX_WORD = 64
#: characters spaCy reads as one document, at most
CHUNK_CHARS = 2000
#: characters of the neighbouring pieces read with a piece, on each side
CONTEXT = 120

_SYMBOLS = re.compile(rf"[^\w\s]{{{MAX_SYMBOL_RUN + 1},}}")
_LONG_WORD = re.compile(rf"\S{{{MAX_WORD + 1},}}")
_NON_WORD = re.compile(r"[^\w]")
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*\s+|\n\s*")
_SPACE = re.compile(r"\s+")


def neutralise(text: str) -> str:
    """``text`` with the runs that make spaCy's tokenizer slow read as spaces (the same
    length: offsets stay valid)."""
    text = _SYMBOLS.sub(lambda m: m[0][:MAX_SYMBOL_RUN].ljust(len(m[0])), text)
    return _LONG_WORD.sub(lambda m: _cut_word(m[0]), text)


def _cut_word(word: str) -> str:
    chars = list(word)
    start = 0
    while len(chars) - start > MAX_WORD:
        end = start + MAX_WORD
        # the last non-word character in the window's second half, else the window's end
        cut = end
        for m in _NON_WORD.finditer(word, start + MAX_WORD // 2, end + 1):
            cut = m.start()
        chars[cut] = " "
        start = cut + 1
    return "".join(chars)


def spans(text: str, size: int = CHUNK_CHARS) -> list[tuple[int, int]]:
    """(start, end) of the pieces ``text`` is read in: at most ``size`` characters each,
    cut after a sentence end if the piece's second half has one, else after whitespace;
    the whitespace between two pieces belongs to neither."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while n - start > size:
        low, high = start + size // 2, start + size
        cut = high
        for pattern in (_SENTENCE_END, _SPACE):
            found = [m.end() for m in pattern.finditer(text, low, high)]
            if found:
                cut = found[-1]
                break
        out.append((start, _rstrip(text, start, cut)))
        start = cut
        while start < n and text[start].isspace():
            start += 1
    if start < n:
        out.append((start, n))
    return out


def windows(text: str, size: int = CHUNK_CHARS) -> list[tuple[int, int, int, int]]:
    """The pieces of ``text`` (``spans``) with their context: (read from, keep from,
    keep to, read to). A text of one piece is read as it is."""
    cores = spans(text, size)
    if len(cores) == 1:
        return [(0, *cores[0], len(text))]
    out = []
    for start, end in cores:
        before = max(0, start - CONTEXT)
        words = _SPACE.search(text, before, start) if before else None
        after = min(len(text), end + CONTEXT)
        last = [m.start() for m in _SPACE.finditer(text, end, after)]
        stop = last[-1] if last and after < len(text) else after
        out.append((words.end() if words else before, start, end, stop))
    return out


def _rstrip(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end
