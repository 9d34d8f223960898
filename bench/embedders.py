"""Embedders: throughput, load time, peak RSS and vector-only LoCoMo recall of every
embedder (MiniLM int8 ONNX on onnxruntime and fp32 in numpy; bge-small-en-v1.5 int8 and
fp32 ONNX from their Maven jars, installed first as `graphmem services install` does),
and the MiniLM int8 session's settings (threads, batch size, graph optimisation).

Corpus: the turns of the LoCoMo dev conversations ("Speaker: text [image: caption]"), read
at run time from ``../shared/bench/locomo-dev.json`` (never copied here). No services:

1. one fresh subprocess per model loads it (load time, RSS before and after), embeds every
   turn and question once (peak RSS) and hands the vectors back;
2. recall is computed offline from those vectors: per question, cosine top-k over the
   turns of its own conversation, evidence cleaned and scored as ``bench/lib/locomo.py`` does
   (LoCoMo's recall_acc, category 5 excluded from the headline);
3. throughput: every configuration embeds all turns once per round, configurations
   interleaved round by round (the machine is shared: drift hits all alike), median of
   the rounds in items/s;
4. enrichment as the worker runs it (embedding beside NER), before and after;
5. long texts: documents of consecutive turns cut at the model's 256 tokens, embedded in
   a fresh process per token budget a run (``embed.BATCH_TOKENS``): the peak RSS above
   the loaded model, what the process keeps afterwards, and texts/s.

    .venv/bin/python -m bench.embedders [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.lib.locomo import LOCOMO, evidence_ids, recall_row, summarise, turn_text
from bench.lib.report import ROOT, run_info, save_json, update_section
from graphmem.enrich.names import EMBEDDERS

MODELS = EMBEDDERS  # every model `GRAPHMEM_EMBEDDER` names


@dataclass(frozen=True)
class Config:
    key: str
    embedder: str  # one of MODELS
    threads: int  # onnxruntime intra-op threads, or numpy's BLAS threads
    batch_size: int = 32  # both embedders' default
    #: onnxruntime graph optimisation level (ONNX models; None: the embedder's own)
    optimization: str | None = None
    spinning: bool = False  # onnxruntime's intra-op threads busy-wait (int8 only)
    arena: bool = True  # onnxruntime's memory arena (int8 only; GRAPHMEM_EMBEDDER_ARENA)
    main: bool = False  # a row of the headline table (the rest is the settings sweep)


CONFIGS = [
    # MiniLM int8 as the service runs it: integer kernels, one text a run (bench/kernels.py
    # compares the two kernels in detail)
    Config("int8i-t1", "minilm-int8", 1, 1, main=True),
    Config("int8i-t2", "minilm-int8", 2, 1, main=True),
    # The float kernels' rows are MiniLMInt8Embedder's float defaults (batch 32,
    # optimisation "basic"); the sweep varies one setting at a time from there.
    Config("int8-t1", "minilm-int8-float", 1, optimization="basic", main=True),
    Config("int8-t2", "minilm-int8-float", 2, optimization="basic", main=True),
    Config("fp32-t1", "minilm-fp32", 1, main=True),
    Config("fp32-t2", "minilm-fp32", 2, main=True),
    # bge's int8 export embeds one text a run (its activations are quantised per run)
    Config("bge8-t1", "bge-small-int8", 1, 1, main=True),
    Config("bge8-t2", "bge-small-int8", 2, 1, main=True),
    Config("bge32-t1", "bge-small-fp32", 1, main=True),
    Config("bge32-t2", "bge-small-fp32", 2, main=True),
    Config("bge8-t1-b32", "bge-small-int8", 1, 32),
    # e5's int8 export likewise
    Config("e5-t1", "e5-small-int8", 1, 1, main=True),
    Config("e5-t2", "e5-small-int8", 2, 1, main=True),
    # the jar models run at "extended"; these rows are the level MiniLM runs at
    Config("bge8-t1-basic", "bge-small-int8", 1, 1, "basic"),
    Config("e5-t1-basic", "e5-small-int8", 1, 1, "basic"),
    Config("int8-t1-all", "minilm-int8-float", 1, optimization="all"),
    Config("int8-t2-all", "minilm-int8-float", 2, optimization="all"),
    *(Config(f"int8-t1-b{b}", "minilm-int8-float", 1, b, "basic") for b in (8, 16, 64)),
    Config("int8-t2-b16", "minilm-int8-float", 2, 16, "basic"),
    Config("int8-t2-spin", "minilm-int8-float", 2, spinning=True),
    # the API's sessions: no arena (it never returns memory), at the ingest session's two
    # threads and the query session's one
    Config("int8-t2-noarena", "minilm-int8-float", 2, arena=False),
    Config("int8-t1-noarena", "minilm-int8-float", 1, arena=False),
]
QUICK_CONFIGS = (
    "int8i-t1",
    "int8-t1",
    "int8-t2",
    "fp32-t1",
    "fp32-t2",
    "bge8-t1",
    "bge32-t1",
    "e5-t1",
    "e5-t1-basic",
)


# --- the corpus ------------------------------------------------------------------------


def corpus(quick: bool) -> list[dict[str, Any]]:
    """Per conversation: its turns (dia_id, text) and its questions with cleaned evidence."""
    data = json.loads(LOCOMO.read_text())
    out = []
    for conversation in data[:1] if quick else data:
        conv = conversation["conversation"]
        turns: list[tuple[str, str]] = []
        n = 1
        while f"session_{n}" in conv:
            turns += [(t["dia_id"], turn_text(t)) for t in conv[f"session_{n}"]]
            n += 1
        if quick:
            turns = turns[:40]
        known = {dia for dia, _ in turns}
        questions = []
        for qa in conversation["qa"]:
            evidence = evidence_ids(qa.get("evidence") or [], known)
            if evidence:
                questions.append((qa["question"], evidence, int(qa["category"])))
        out.append(
            {
                "sample_id": conversation["sample_id"],
                "turns": turns,
                "questions": questions[:20] if quick else questions,
            }
        )
    return out


def recall(conversations: list[dict[str, Any]], turns: np.ndarray, questions: np.ndarray) -> Any:
    rows = []
    t = q = 0
    for c in conversations:
        ids = [dia for dia, _ in c["turns"]]
        tv = turns[t : t + len(ids)]
        qv = questions[q : q + len(c["questions"])]
        t, q = t + len(ids), q + len(c["questions"])
        order = np.argsort(-(qv @ tv.T), axis=1, kind="stable")[:, :10]
        for (_, evidence, category), top in zip(c["questions"], order, strict=True):
            rows.append(recall_row(category, [ids[i] for i in top], evidence))
    return summarise(rows)


# --- numpy's BLAS threads (process-wide) ----------------------------------------------


def blas_threads(n: int) -> None:
    """Set OpenBLAS's thread count in this process (numpy's wheels bundle scipy-openblas)."""
    libs = glob.glob(str(Path(np.__file__).parent.parent / "numpy.libs" / "*openblas*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for symbol in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads"):
            if hasattr(lib, symbol):
                getattr(lib, symbol)(n)
                return
    os.environ["OPENBLAS_NUM_THREADS"] = str(n)  # only helps processes started later


def build(config: Config) -> Any:
    from graphmem.enrich.bge import BgeSmallEmbedder
    from graphmem.enrich.e5 import E5SmallEmbedder
    from graphmem.enrich.minilm import MiniLMFp32Embedder, MiniLMInt8Embedder
    from graphmem.settings import load_settings

    if config.embedder == "e5-small-int8":
        return E5SmallEmbedder(
            load_settings().models_dir,
            config.threads,
            arena=config.arena,
            optimization=config.optimization,  # type: ignore[arg-type]
        )
    if config.embedder.startswith("bge-small-"):
        return BgeSmallEmbedder(
            load_settings().models_dir,
            config.embedder,
            config.threads,
            arena=config.arena,
            batch_size=config.batch_size,
            optimization=config.optimization,  # type: ignore[arg-type]
        )
    if config.embedder.startswith("minilm-int8"):
        return MiniLMInt8Embedder(
            threads=config.threads,
            batch_size=config.batch_size,
            optimization=config.optimization or "basic",  # type: ignore[arg-type]
            spinning=config.spinning,
            arena=config.arena,
            kernels="float" if config.embedder == "minilm-int8-float" else "integer",
        )
    blas_threads(config.threads)
    return MiniLMFp32Embedder(batch_size=config.batch_size)


def own_optimization(embedder: str) -> str:
    """The graph optimisation level ``embedder`` runs at by default ("—": not onnxruntime)."""
    from graphmem.enrich.bge import BgeSmallEmbedder
    from graphmem.enrich.e5 import E5SmallEmbedder

    if embedder.startswith("minilm-int8"):
        return "basic"
    if embedder.startswith("bge-small-"):
        return BgeSmallEmbedder.optimization
    if embedder.startswith("e5-small-"):
        return E5SmallEmbedder.optimization
    return "—"


# --- 1. one model in a fresh process: load time, memory, vectors ---------------------


def rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def profile_worker(model: str, texts_file: Path, out_prefix: Path) -> None:
    """Runs in its own process (``--profile MODEL``, ``MODEL:noarena`` for the int8
    session without its arena): prints JSON, saves vectors."""
    texts = json.loads(texts_file.read_text())
    from graphmem.ops import allocator

    # glibc set as `graphmem serve` and `graphmem worker` set it: under its default,
    # growing mmap threshold a session without its arena leaves its freed batches on
    # the heap, and peaks about 200 MB higher than the service would
    allocator.tune(trim_seconds=None)
    import graphmem.enrich.embed  # numpy, tokenizers: the process without a model
    import graphmem.enrich.embedders

    model, _, variant = model.partition(":")
    baseline = rss_mb()
    started = time.perf_counter()
    from graphmem.settings import load_settings

    embedder = graphmem.enrich.embedders.make_embedder(
        model, threads=2, arena=variant != "noarena", models_dir=load_settings().models_dir
    )
    load_s = time.perf_counter() - started
    loaded = rss_mb()
    started = time.perf_counter()
    # a turn as a memory: behind the model's document instruction (e5's "passage: ")
    turns = embedder.embed([embedder.document_prefix + t for t in texts["turns"]])
    first_pass_s = time.perf_counter() - started
    questions = graphmem.enrich.embed.embed_queries(embedder, texts["questions"])
    np.save(out_prefix.with_suffix(".turns.npy"), turns)
    np.save(out_prefix.with_suffix(".questions.npy"), questions)
    print(
        json.dumps(
            {
                "name": embedder.name,
                "load_s": round(load_s, 3),
                "rss_baseline_mb": baseline,
                "rss_loaded_mb": loaded,
                "rss_peak_mb": rss_mb("VmHWM"),
                "first_pass_s": round(first_pass_s, 2),
            }
        )
    )


def in_a_process(*args: str) -> dict[str, Any]:
    """``python -m bench.embedders ARGS`` in a fresh process: the JSON it prints last."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.embedders", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench.embedders {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def profile(
    model: str, texts_file: Path, workdir: Path
) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    prefix = workdir / model.replace(":", "-")
    info = in_a_process("--profile", model, str(texts_file), str(prefix))
    turns = np.load(prefix.with_suffix(".turns.npy"))
    questions = np.load(prefix.with_suffix(".questions.npy"))
    return info, turns, questions


# --- 3. throughput, interleaved --------------------------------------------------------


def throughput(texts: list[str], configs: list[Config], rounds: int) -> dict[str, list[float]]:
    embedders = {c.key: build(c) for c in configs}
    for c in configs:  # warm up: first calls allocate and tune
        blas_threads(c.threads)
        embedders[c.key].embed(texts[:8])
    rates: dict[str, list[float]] = {c.key: [] for c in configs}
    for r in range(rounds):
        for c in configs if r % 2 == 0 else reversed(configs):
            blas_threads(c.threads)
            started = time.perf_counter()
            embedders[c.key].embed(texts)
            rates[c.key].append(round(len(texts) / (time.perf_counter() - started), 1))
        print(
            f"round {r + 1}/{rounds}: " + ", ".join(f"{k} {v[-1]}" for k, v in rates.items()),
            flush=True,
        )
    blas_threads(os.cpu_count() or 1)
    return rates


# --- 4. enrichment: the default embedder as the worker runs it, beside NER ------------


class BeforeInt8Embedder:
    """The int8 embedder as it was before token-count batching and spinning off (commit
    eedc759): batches cut from texts sorted by characters, onnxruntime's threads spinning.
    Kept here so every run compares before and after on the same machine state."""

    def __init__(self) -> None:
        from graphmem.enrich.minilm import MiniLMInt8Embedder

        inner = MiniLMInt8Embedder(threads=2, spinning=True, kernels="float")
        self.name, self.dimension, self._inner = inner.name, inner.dimension, inner
        self.query_prefix = inner.query_prefix
        self.document_prefix = inner.document_prefix
        self.sentence_vectors = inner.sentence_vectors
        self._tok = inner._tok

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from graphmem.enrich.embed import _pad, mean_pool_normalise

        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self._inner.batch_size):
            idx = order[start : start + self._inner.batch_size]
            ids, mask = _pad(self._tok.encode_batch([texts[i] for i in idx]))
            out[idx] = mean_pool_normalise(self._inner._hidden(ids, mask), mask)
        return out


def enrichment(turns: list[str], rounds: int) -> dict[str, Any]:
    """memories/s (and sentences/s) of the default embedder through ``embed_memories``,
    NER's docs/s, and both together as the enrichment worker's two stages run them (two
    threads at once) or one after the other; before and after, interleaved round by round."""
    from concurrent.futures import ThreadPoolExecutor

    from graphmem.enrich.minilm import MiniLMInt8Embedder
    from graphmem.enrich.ner import EntityExtractor
    from graphmem.enrich.sentences import embed_memories, split_sentences

    sentences = sum(len(split_sentences(t)) for t in turns)
    # both on the float kernels: this measures token-count batching (the integer kernels
    # run a text at a time; bench/kernels.py)
    before, after = BeforeInt8Embedder(), MiniLMInt8Embedder(threads=2, kernels="float")
    ner = EntityExtractor()
    pool = ThreadPoolExecutor(2)

    def side_by_side(embedder: Any) -> None:
        vectors = pool.submit(embed_memories, embedder, turns)
        ner.extract(turns)
        vectors.result()

    def one_after_other(embedder: Any) -> None:
        embed_memories(embedder, turns)
        ner.extract(turns)

    variants = {
        "embed before": lambda: embed_memories(before, turns),
        "embed after": lambda: embed_memories(after, turns),
        "NER": lambda: ner.extract(turns),
        "enrich before (side by side)": lambda: side_by_side(before),
        "enrich after (side by side)": lambda: side_by_side(after),
        "enrich after (one after the other)": lambda: one_after_other(after),
    }
    variants["NER"]()
    embed_memories(before, turns[:8])
    embed_memories(after, turns[:8])
    rates: dict[str, list[float]] = {k: [] for k in variants}
    for r in range(rounds):
        for key in list(variants) if r % 2 == 0 else list(reversed(variants)):
            started = time.perf_counter()
            variants[key]()
            rates[key].append(round(len(turns) / (time.perf_counter() - started), 1))
        print(
            f"enrichment round {r + 1}/{rounds}: "
            + ", ".join(f"{k} {v[-1]}" for k, v in rates.items()),
            flush=True,
        )
    pool.shutdown()
    flat = [part for t in turns for part in split_sentences(t)]
    mine, theirs = before.embed(flat), after.embed(flat)
    agreement = (mine * theirs).sum(axis=1)
    return {
        "memories": len(turns),
        "sentences": sentences,
        "rows": [
            {
                "key": key,
                "memories_per_s": statistics.median(v),
                "sentences_per_s": round(statistics.median(v) * sentences / len(turns), 1),
                "rounds": v,
            }
            for key, v in rates.items()
        ],
        "before_vs_after_cosine": {
            "min": round(float(agreement.min()), 6),
            "median": round(float(np.median(agreement)), 6),
        },
    }


# --- 5. long texts: a run's peak under the token budget --------------------------------

#: token budgets a run compared: the default, twice it, and 32 texts of 256 tokens (the
#: batch size at the model's limit: what a run took before the budget)
LONG_BUDGETS = (1024, 2048, 32 * 256)


def long_texts(conversations: list[dict[str, Any]], count: int) -> list[str]:
    """Documents of consecutive turns, each long enough to be cut at 256 tokens."""
    turns = [text for c in conversations for _, text in c["turns"]]
    docs, current = [], ""
    for text in itertools.cycle(turns) if turns else ():  # quick runs: round again
        current = f"{current} {text}".strip()
        if len(current) >= 1600:  # about 350 tokens of conversation
            docs.append(current)
            current = ""
            if len(docs) == count:
                break
    return docs


def long_worker(budget: int, texts_file: Path) -> None:
    """Runs in its own process (``--long BUDGET TEXTS``): prints JSON."""
    texts = json.loads(texts_file.read_text())["long"]
    from graphmem.ops import allocator

    allocator.tune(trim_seconds=None)  # as `graphmem worker` sets glibc
    from graphmem.enrich.minilm import MiniLMInt8Embedder

    # arena on, shrunk, as the workers run it; the float kernels, which batch long texts
    embedder = MiniLMInt8Embedder(threads=2, kernels="float")
    embedder.batch_tokens = budget
    embedder.embed(texts[:1])
    loaded = rss_mb()
    # Linux: writing 5 to clear_refs resets VmHWM, so the peak is this embedding's alone
    Path("/proc/self/clear_refs").write_text("5")
    rates = []
    for _ in range(2):
        started = time.perf_counter()
        embedder.embed(texts)
        rates.append(round(len(texts) / (time.perf_counter() - started), 1))
    print(
        json.dumps(
            {
                "batch_tokens": budget,
                "texts": len(texts),
                "tokens": max(len(e.ids) for e in embedder._tok.encode_batch(texts)),
                "rss_loaded_mb": loaded,
                "peak_over_loaded_mb": round(rss_mb("VmHWM") - loaded, 1),
                "kept_mb": round(rss_mb() - loaded, 1),
                "texts_per_s": statistics.median(rates),
                "rounds": rates,
            }
        )
    )


def long_runs(texts_file: Path) -> list[dict[str, Any]]:
    rows = []
    for budget in LONG_BUDGETS:
        row = in_a_process("--long", str(budget), str(texts_file))
        rows.append(row)
        print(
            f"long texts, {budget} tokens a run: peak +{row['peak_over_loaded_mb']} MB, "
            f"kept {row['kept_mb']} MB, {row['texts_per_s']} texts/s",
            flush=True,
        )
    return rows


# --- the report ------------------------------------------------------------------------


def run(quick: bool) -> dict[str, Any]:
    conversations = corpus(quick)
    turn_texts = [text for c in conversations for _, text in c["turns"]]
    question_texts = [q for c in conversations for q, _, _ in c["questions"]]
    rounds = 1 if quick else 3
    results: dict[str, Any] = {
        "run": run_info(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "corpus": {
            "conversations": [c["sample_id"] for c in conversations],
            "turns": len(turn_texts),
            "questions": len(question_texts),
            "throughput_rounds": rounds,
        },
        "models": {},
    }
    from graphmem.enrich.jarmodels import JAR_MODELS
    from graphmem.ops.devstack.models import install
    from graphmem.settings import load_settings

    for model in MODELS:
        if model in JAR_MODELS:
            install(JAR_MODELS[model], load_settings().models_dir)
    with tempfile.TemporaryDirectory() as tmp:
        texts_file = Path(tmp) / "texts.json"
        longs = long_texts(conversations, 8 if quick else 64)
        texts_file.write_text(
            json.dumps({"turns": turn_texts, "questions": question_texts, "long": longs})
        )
        vectors = {}
        for model in MODELS:
            info, turns, questions = profile(model, texts_file, Path(tmp))
            info["recall"] = recall(conversations, turns, questions)
            results["models"][model] = info
            vectors[model] = turns
            s = info["recall"]
            print(
                f"{model}: load {info['load_s']} s, peak RSS {info['rss_peak_mb']} MB, "
                f"R@5 {s['r5']:.3f} R@10 {s['r10']:.3f} "
                f"multi-hop R@10 {s['by_category'].get('multi-hop', {}).get('r10', 0):.3f}",
                flush=True,
            )
        # the int8 session without its arena: what the API's sessions peak at
        info, _, _ = profile("minilm-int8-float:noarena", texts_file, Path(tmp))
        results["int8_without_arena"] = info
        print(f"minilm-int8 without its arena: peak RSS {info['rss_peak_mb']} MB", flush=True)
        results["long_texts"] = long_runs(texts_file)
    agreement = (vectors["minilm-int8-float"] * vectors["minilm-fp32"]).sum(axis=1)
    results["fp32_vs_int8_cosine"] = {
        "mean": round(float(agreement.mean()), 5),
        "min": round(float(agreement.min()), 5),
    }
    agreement = (vectors["bge-small-int8"] * vectors["bge-small-fp32"]).sum(axis=1)
    results["bge_fp32_vs_int8_cosine"] = {
        "mean": round(float(agreement.mean()), 5),
        "min": round(float(agreement.min()), 5),
    }
    configs = [c for c in CONFIGS if c.key in QUICK_CONFIGS] if quick else CONFIGS
    rates = throughput(turn_texts, configs, rounds)
    results["throughput"] = [
        asdict(c) | {"items_per_s": statistics.median(rates[c.key]), "rounds": rates[c.key]}
        for c in configs
    ]
    results["enrichment"] = enrichment(turn_texts, rounds)
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    int8 = [t for t in results["throughput"] if t["embedder"] == "minilm-int8-float"]
    results["best_int8"] = max(int8, key=lambda t: t["items_per_s"])["key"]
    return results


def _row(results: dict[str, Any], key: str) -> dict[str, Any]:
    row: dict[str, Any] = next(t for t in results["throughput"] if t["key"] == key)
    return row


def tables(results: dict[str, Any]) -> str:
    lines = [
        "| embedder | threads | items/s (rounds) | load s | RSS before load MB | peak RSS MB "
        "| R@5 excl. cat 5 | R@10 excl. cat 5 | R@10 multi-hop |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    labels = {
        "minilm-int8": "MiniLM int8 ONNX, integer kernels, one text a run",
        "minilm-int8-float": "MiniLM int8 ONNX, float kernels (onnxruntime)",
        "minilm-fp32": "MiniLM fp32 (numpy)",
        "bge-small-int8": "bge-small int8 ONNX, one text a run",
        "bge-small-fp32": "bge-small fp32 ONNX",
        "e5-small-int8": "e5-small int8 ONNX, one text a run, whole turns",
    }
    for t in results["throughput"]:
        if not t["main"]:
            continue
        m = results["models"][t["embedder"]]
        s = m["recall"]
        lines.append(
            f"| {labels[t['embedder']]} | {t['threads']} | {t['items_per_s']:.0f} "
            f"({spread(t)}) | "
            f"{m['load_s']:.2f} | {m['rss_baseline_mb']:.0f} | {m['rss_peak_mb']:.0f} | "
            f"{s['r5']:.3f} | {s['r10']:.3f} | "
            f"{s['by_category'].get('multi-hop', {}).get('r10', 0):.3f} |"
        )
    lines += [
        "",
        "| settings | threads | batch | graph optimisation | spinning | arena | items/s (rounds) |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in sorted(
        results["throughput"], key=lambda t: (t["embedder"], -t["threads"], t["batch_size"])
    ):
        minilm = t["embedder"].startswith("minilm-int8")
        opt = t["optimization"] or own_optimization(t["embedder"])
        spin = ("yes" if t.get("spinning") else "no") if minilm else "—"
        arena = ("yes" if t.get("arena", True) else "no") if minilm else "—"
        lines.append(
            f"| {t['embedder']} | {t['threads']} | {t['batch_size']} | {opt} | {spin} | {arena} | "
            f"{t['items_per_s']:.0f} ({spread(t)}) |"
        )
    if results.get("long_texts"):
        longest = results["long_texts"][0]
        lines += [
            "",
            f"Long texts: {longest['texts']} documents of consecutive turns, cut at "
            f"{longest['tokens']} tokens, the int8 embedder at 2 threads with its arena (as "
            "the workers run it), a fresh process per budget; peak and kept RSS above the "
            "loaded model:",
            "",
            "| tokens a run (texts x padded) | texts a run | peak MB above loaded | kept MB "
            "| texts/s (rounds) |",
            "|---|---|---|---|---|",
        ]
        for row in results["long_texts"]:
            lines.append(
                f"| {row['batch_tokens']:,} | {min(32, row['batch_tokens'] // row['tokens'])} "
                f"| {row['peak_over_loaded_mb']:.0f} | {row['kept_mb']:.0f} "
                f"| {row['texts_per_s']:.1f} ({'/'.join(f'{r:.1f}' for r in row['rounds'])}) |"
            )
    e = results.get("enrichment")
    if e:
        lines += [
            "",
            f"Enrichment of the {e['memories']} turns ({e['sentences']} sentences), the "
            "default embedder at 2 threads, memories embedded sentence by sentence "
            "(`embed_memories`):",
            "",
            "| component | memories/s (rounds) | sentences/s |",
            "|---|---|---|",
        ]
        for row in e["rows"]:
            per_sentence = "—" if row["key"] == "NER" else f"{row['sentences_per_s']:.0f}"
            lines.append(
                f"| {row['key']} | {row['memories_per_s']:.0f} ({spread_of(row['rounds'])}) "
                f"| {per_sentence} |"
            )
    return "\n".join(lines)


def spread(row: dict[str, Any]) -> str:
    return spread_of(row["rounds"])


def spread_of(rounds: list[float]) -> str:
    return "/".join(f"{r:.0f}" for r in rounds)


def conclusion(results: dict[str, Any]) -> str:
    int8, fp32 = results["models"]["minilm-int8-float"], results["models"]["minilm-fp32"]

    def rate(key: str) -> str:
        return f"{_row(results, key)['items_per_s']:.0f}"

    i1, f1 = _row(results, "int8-t1")["items_per_s"], _row(results, "fp32-t1")["items_per_s"]
    ri, rf = int8["recall"]["r10"], fp32["recall"]["r10"]
    q = int8["recall"]["questions"]  # the headline's: category 5 excluded
    agreement = results["fp32_vs_int8_cosine"]
    same = abs(ri - rf) <= 0.02
    recall_text = (
        f"Recall is the same within noise: R@10 {ri:.3f} int8 against {rf:.3f} fp32"
        if same
        else f"Recall differs: R@10 {ri:.3f} int8 against {rf:.3f} fp32"
    )
    verdict = (
        "the int8 weights are the ones to run: faster at the same recall, and they ship in "
        "a dependency the service already has (the service runs them on integer kernels, "
        'one text a run: the first row above, and "Integer kernels")'
        if i1 >= f1 and same
        else "the figures do not settle the default on their own: read them before changing it"
    )
    return (
        f"The int8 file on float kernels and fp32 run the same network (the int8 file stores "
        f"all-MiniLM-L6-v2's matrices as int8 with per-channel scales, widened to float32 when "
        f"the session starts), and "
        f"their vectors agree to cosine {agreement['mean']:.4f} on average (min "
        f"{agreement['min']:.4f}) over the {results['corpus']['turns']} turns. {recall_text} "
        f"over {q} questions (one question moves R@10 by about {1 / max(q, 1):.3f}). One "
        f"thread is the steady measure on this shared machine (two-thread rounds swing with "
        f"whatever else runs: see the rounds in brackets): there onnxruntime embeds "
        f"{i1:.0f} items/s against numpy's {f1:.0f} ({i1 / f1:.2f} times). int8 loads in "
        f"{int8['load_s']:.2f} s against {fp32['load_s']:.2f} s but peaks at "
        f"{int8['rss_peak_mb']:.0f} MB against {fp32['rss_peak_mb']:.0f} MB (the session holds "
        f"the int8 weights and their float32 copies). So {verdict}. Its session uses graph "
        f"optimisation `basic` rather than onnxruntime's default `all` ({rate('int8-t1')} "
        f"against {rate('int8-t1-all')} items/s on one thread; the fusions `all` adds do not "
        f"pay on this graph). Its batch stays 32: batches of 8 and 16 ({rate('int8-t1-b8')}, "
        f"{rate('int8-t1-b16')} items/s) pad less and win on one thread, but not reliably on "
        f"two, where the service runs it by default; 64 is slower ({rate('int8-t1-b64')})."
        f"{arena_conclusion(results)}"
    )


def bge_conclusion(results: dict[str, Any]) -> str:
    bge, minilm = results["models"]["bge-small-int8"], results["models"]["minilm-int8"]
    fp32 = results["models"]["bge-small-fp32"]
    rb, rm = bge["recall"], minilm["recall"]

    def multi(r: dict[str, Any]) -> float:
        return float(r["by_category"].get("multi-hop", {}).get("r10", 0))

    def rate(key: str) -> float:
        return float(_row(results, key)["items_per_s"])

    agreement = results["bge_fp32_vs_int8_cosine"]
    batched = next((t for t in results["throughput"] if t["key"] == "bge8-t1-b32"), None)
    batch_text = (
        f" Batched 32 to a run (which makes a text's vector depend on its batch-mates, so "
        f"the service never does) it would embed {batched['items_per_s']:.0f}."
        if batched
        else ""
    )
    return (
        f"\n\nbge-small-en-v1.5 (12 layers against MiniLM's 6; its query instruction before "
        f"each question, CLS pooling): vector-only R@10 {rb['r10']:.3f} against MiniLM's "
        f"{rm['r10']:.3f}, multi-hop {multi(rb):.3f} against {multi(rm):.3f} (one vector per "
        f"whole turn here; graphmem's own sentence vectors and fusion are `bench/locomo.py`'s). "
        f"Its int8 export, one text a run, embeds {rate('bge8-t1'):.0f} turns/s on one thread "
        f"against MiniLM int8's {rate('int8i-t1'):.0f} on integer kernels "
        f"({rate('bge8-t1') / rate('int8i-t1'):.2f} times).{batch_text} "
        f"The fp32 export embeds {rate('bge32-t1'):.0f}/s, peaks at "
        f"{fp32['rss_peak_mb']:.0f} MB against int8's {bge['rss_peak_mb']:.0f} MB, and agrees "
        f"with it to cosine {agreement['mean']:.4f} on average (min {agreement['min']:.4f}); "
        f"R@10 {fp32['recall']['r10']:.3f}."
        f"{e5_conclusion(results, rate, multi)}"
    )


def e5_conclusion(
    results: dict[str, Any], rate: Callable[[str], float], multi: Callable[[Any], float]
) -> str:
    e5 = results["models"].get("e5-small-int8")
    if e5 is None or not any(t["key"] == "e5-t1" for t in results["throughput"]):
        return ""
    r = e5["recall"]
    return (
        f' e5-small-v2 (12 layers, mean pooling, each turn behind "passage: " and each '
        f'question behind "query: "): R@10 {r["r10"]:.3f}, multi-hop {multi(r):.3f}, the '
        f"best of the models here; its int8 export, one text a run, embeds "
        f"{rate('e5-t1'):.0f} turns/s on one thread ({rate('e5-t1') / rate('int8i-t1'):.2f} "
        f"times MiniLM int8's).{level_conclusion(results, rate)}"
    )


def level_conclusion(results: dict[str, Any], rate: Callable[[str], float]) -> str:
    keys = {t["key"] for t in results["throughput"]}
    if not {"e5-t1-basic", "e5-t1", "bge8-t1"} <= keys:
        return ""
    bge = (
        f", bge {rate('bge8-t1'):.0f} against {rate('bge8-t1-basic'):.0f}"
        if "bge8-t1-basic" in keys
        else ""
    )
    return (
        f" The two jar models run at onnxruntime's graph level `extended`, whose fusions "
        f"(layer norms, GELU, quantised MatMuls) match their graphs: one thread embeds "
        f"e5 {rate('e5-t1'):.0f} turns/s against {rate('e5-t1-basic'):.0f} at `basic`{bge}."
    )


def arena_conclusion(results: dict[str, Any]) -> str:
    off = results.get("int8_without_arena")
    if off is None or not any(t["key"] == "int8-t2-noarena" for t in results["throughput"]):
        return ""
    on = results["models"]["minilm-int8-float"]

    def rate(key: str) -> str:
        return f"{_row(results, key)['items_per_s']:.0f}"

    return (
        f" Without onnxruntime's memory arena (`GRAPHMEM_EMBEDDER_ARENA`: the API's sessions, "
        f"whose texts come a few at a time) the session peaks at {off['rss_peak_mb']:.0f} MB "
        f"against {on['rss_peak_mb']:.0f} MB after the same turns; batches embed at "
        f"{rate('int8-t2-noarena')} against "
        f"{rate('int8-t2')} items/s on two threads ({rate('int8-t1-noarena')} against "
        f"{rate('int8-t1')} on one), which is why the enrichment workers keep it, shrunk at "
        f"the end of every run so that it gives back what a large batch took."
    )


def long_conclusion(results: dict[str, Any]) -> str:
    rows = {row["batch_tokens"]: row for row in results.get("long_texts", [])}
    if not rows:
        return ""
    now, double, before = (rows[b] for b in LONG_BUDGETS)
    return (
        f"\n\nLong texts: a run's activations grow with texts times tokens² (attention), so a "
        f"run is cut at {now['batch_tokens']:,} texts times padded tokens (`embed.BATCH_TOKENS`). "
        f"Texts at the model's limit go {now['batch_tokens'] // now['tokens']} to a run, and "
        f"the process peaks {now['peak_over_loaded_mb']:.0f} MB above the loaded model, "
        f"against {before['peak_over_loaded_mb']:.0f} MB at 32 a run, at "
        f"{now['texts_per_s']:.1f} against {before['texts_per_s']:.1f} texts/s; "
        f"{double['batch_tokens']:,} tokens would peak at {double['peak_over_loaded_mb']:.0f} "
        f"MB for {double['texts_per_s']:.1f} texts/s. With the arena shrunk after every run, "
        f"the process ends {now['kept_mb']:.0f} MB above the loaded model."
    )


def enrichment_conclusion(results: dict[str, Any]) -> str:
    e = results.get("enrichment")
    if not e:
        return ""
    rate = {row["key"]: row for row in e["rows"]}

    def m(key: str) -> str:
        return f"{rate[key]['memories_per_s']:.0f}"

    cosine = e["before_vs_after_cosine"]
    return (
        f"\n\nEnrichment: a memory is {e['sentences'] / e['memories']:.2f} sentences on "
        f"average, so the embedder's memories/s is its sentences/s over that. Batching by "
        f"token count (not characters: 21% of the tokens run were padding, now about 1.5%) "
        f"and onnxruntime's threads not spinning took the embedder from {m('embed before')} "
        f"to {m('embed after')} memories/s and enrichment as the worker runs it (embedding "
        f"beside NER) from {m('enrich before (side by side)')} to "
        f"{m('enrich after (side by side)')} memories/s; one after the other it is "
        f"{m('enrich after (one after the other)')}, NER alone {m('NER')} docs/s. The vectors "
        f"are the same: cosine before against after min {cosine['min']:.6f}, median "
        f"{cosine['median']:.6f} over the {e['sentences']} sentences."
    )


def report(results: dict[str, Any]) -> None:
    """Write bench/results/embedders.json and the BENCHMARKS.md section."""
    save_json("embedders", results)
    run_, corpus_ = results["run"], results["corpus"]
    headline = results["models"]["minilm-int8"]["recall"]["questions"]
    update_section(
        "embedders",
        f"""## Embedders: speed, memory and recall

`bench/embedders.py`: every installed embedder (MiniLM, bge-small, e5-small) over the
{corpus_["turns"]} turns of the LoCoMo dev conversations (read from `../shared/bench`).
Throughput embeds every turn once per round, configurations interleaved, median of
{corpus_["throughput_rounds"]} rounds; load time and RSS in a fresh process per model (RSS
includes Python, numpy and the tokenizer: compare with the column before load); recall is
vector only, computed offline (cosine top-k among a conversation's turns,
{corpus_["questions"]} questions, of which the {headline} outside category 5 make the
headline). {run_["date"]},
commit {run_["commit"]}, {run_["machine"]}; load average {results["load_average_before"][0]}
before, {results["load_average_after"][0]} after (the machine is shared).

{tables(results)}

{conclusion(results)}{bge_conclusion(results)}{enrichment_conclusion(results)}{long_conclusion(results)}""",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 turns, 20 questions, 1 round")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    parser.add_argument(
        "--profile", nargs=3, metavar=("MODEL", "TEXTS", "PREFIX"), help=argparse.SUPPRESS
    )
    parser.add_argument("--long", nargs=2, metavar=("BUDGET", "TEXTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.profile:
        profile_worker(args.profile[0], Path(args.profile[1]), Path(args.profile[2]))
        return
    if args.long:
        long_worker(int(args.long[0]), Path(args.long[1]))
        return
    results = run(args.quick)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        return
    report(results)


if __name__ == "__main__":
    main()
