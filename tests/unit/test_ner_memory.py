"""NER in a long-running process: reading texts full of new words does not grow spaCy's
vocabulary (which would grow the worker without end), and what it extracted stays whole."""

from __future__ import annotations

from graphmem.enrich.ner import EntityExtractor


def test_new_words_leave_nothing_in_the_vocabulary_and_the_extractions_stay_whole() -> None:
    extractor = EntityExtractor()
    extractor.extract(["Alice met Bob in Paris."])  # loads what every call uses
    strings = len(extractor.nlp.vocab.strings)
    texts = [
        f"Alice met Quorvex{n} in Paris about zintral{n} at Fabrikon{n} Corp." for n in range(300)
    ]
    found = extractor.extract(texts)
    assert len(extractor.nlp.vocab.strings) == strings
    names = {m.name for m in found[7].mentions}
    assert "Paris" in names and any("7" in name for name in names), names
