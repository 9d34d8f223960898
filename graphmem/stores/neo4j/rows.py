"""Graph rows written: the parameter maps the write statements of ``cypher/`` take, built
from typed values.

A memory's properties are named here on the way in and in ``records.py`` on the way out;
``pack_vector`` is the one encoding of a memory's ``vectorBytes``, which search reads back
(``records.memory_rows``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphmem.domain.models import scope_tokens
from graphmem.stores.models import GraphMemory, MemoryVectors, TextAnalysis


def pack_vector(vector: Sequence[float] | None) -> bytes | None:
    """A memory's own vector as a graph property beside the vector index's copy: float32
    little-endian bytes (``vectorBytes``), which search reads into memory a hundred times
    faster than the list of floats the index needs."""
    if vector is None:
        return None
    return np.asarray(vector, dtype="<f4").tobytes()


def analysis_row(analysis: TextAnalysis) -> dict[str, Any]:
    """A memory's text analysis as the properties that hold it (``termVersion`` versions
    both: ``Memory.backfill_terms``)."""
    return {"termBytes": analysis.terms, "speaker": analysis.speaker}


#: the metadata field ``graphmem import`` records a memory's import id in
#: (``graphmem/transfer/sources.py``); an exported memory's is ``memory:<its old id>``
IMPORT_ID = "graphmemImportId"


def _origin(metadata: dict[str, Any]) -> str | None:
    value = metadata.get(IMPORT_ID)
    if isinstance(value, str) and value.startswith("memory:"):
        return value.removeprefix("memory:")
    return None


def memory_row(memory: GraphMemory) -> dict[str, Any]:
    """The parameter map one ``UNWIND`` row of the upsert statements expects."""
    item, embedding = memory.item, memory.embedding
    return {
        "id": item.id,
        "sessionId": item.session_id,
        "userId": item.user_id,
        "content": item.content,
        "type": item.type.value,
        "tier": item.tier.value,
        "accessCount": item.access_count,
        "lastAccessedAt": item.last_accessed_at,
        "createdAt": item.created_at,
        "recordedAt": item.recorded,
        "relevanceScore": item.relevance_score,
        "tokenCount": item.token_count,
        "contentHash": item.content_hash,
        # Neo4j properties cannot hold maps; metadata round-trips as JSON text.
        "metadata": json.dumps(item.metadata, separators=(",", ":"), sort_keys=True),
        # the id an imported memory had where it was exported: a tombstone on that id
        # keeps an old export from bringing an erased memory back (erasure/tombstone)
        "origin": _origin(item.metadata),
        "embedding": embedding,
        "vectorBytes": pack_vector(embedding),
        # float16 vectors of each sentence (enrich/sentences.py); null for one sentence
        "sentenceVectors": memory.sentences,
        "seq": item.seq,
        # analyzer tokens for tenant, session and user: fulltext queries filter in Lucene
        "scopeToken": scope_tokens(item.tenant, item.session_id, item.user_id),
        **analysis_row(memory.analysis),
        "termVersion": memory.analysis.version,
    }


def vector_row(vectors: MemoryVectors) -> dict[str, Any]:
    """A memory's vectors as the statements that set them take one row
    (memory/set_vectors, reembed/memory_next)."""
    return {
        "id": vectors.id,
        "embedding": vectors.embedding,
        "vectorBytes": pack_vector(vectors.embedding),
        "sentenceVectors": vectors.sentences,
    }
