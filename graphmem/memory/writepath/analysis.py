"""What the write paths hand the graph store: each memory with its vectors and what search
reads of its text without reading the text (``TextAnalysis``), analysed here, where the
language tools are, so that the store only writes what it is given."""

from __future__ import annotations

from graphmem.domain.models import MemoryItem
from graphmem.enrich import lexical
from graphmem.enrich.sentences import Embedded, pack, speaker
from graphmem.stores.models import GraphMemory, MemoryVectors, TextAnalysis


def analysed(content: str, terms: bytes | None = None) -> TextAnalysis:
    """A text's stems' hashes (``terms`` when already computed, off the event loop) and
    who said it, for a question that names them (``fusion.add_speaker``);
    ``lexical.VERSION`` versions both (``Memory.backfill_terms``)."""
    return TextAnalysis(
        terms=lexical.term_bytes(content) if terms is None else terms,
        speaker=speaker(content),
        version=lexical.VERSION,
    )


def graph_memory(
    item: MemoryItem,
    embedding: list[float] | None = None,
    sentences: bytes | None = None,
    terms: bytes | None = None,
) -> GraphMemory:
    """``item`` as the graph writes it (in its tier), with its vectors when computed."""
    return GraphMemory(item, analysed(item.content, terms), embedding, sentences)


def memory_vectors(memory_id: str, embedded: Embedded) -> MemoryVectors:
    """A memory's vectors as computed, for a node that exists."""
    return MemoryVectors(memory_id, embedded.vector, pack(embedded.sentences))
