"""Relevance on one scale: where each model's cosines lie, and the map that puts them on
all-MiniLM-L6-v2 int8's scale, the one recall's thresholds (``minRelevance``,
``promoteThreshold``) and the episodes' signature boost are written in.

Corpus: the turns of the LoCoMo dev conversations, read at run time from
``../shared/bench/locomo-dev.json`` (never copied here). No services. For every model
`GRAPHMEM_EMBEDDER` names:

1. the turns are embedded as the service stores them (``embed_memories``: behind the
   model's document prefix, sentence by sentence where the model does so) and the
   questions as it searches (``embed_queries``);
2. each question scores every turn of its conversation as search does (the larger of the
   memory's own cosine and its best sentence's), and the median over the questions of the
   cosine at each of ``RANKS`` is taken;
3. those medians are fitted to MiniLM int8's at the same ranks by least squares
   (MiniLM = a x cosine + b): the model's ``RelevanceScale``
   (``graphmem/memory/search/relevance.py``), reported as the cosines it maps to 0 and 1.

    python -m bench.relevance [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from bench.embedders import corpus
from bench.lib.report import run_info, save_json, update_section
from graphmem.enrich.embed import embed_queries
from graphmem.enrich.embedders import make_embedder
from graphmem.enrich.names import EMBEDDERS
from graphmem.enrich.sentences import best_cosines, embed_memories, pack
from graphmem.memory.search.relevance import scale_of
from graphmem.settings import load_settings

#: ranks whose median cosine is compared across models (best first)
RANKS = (1, 3, 10, 30, 100, 300)
QUICK_RANKS = (1, 3, 10, 30)
#: the model whose scale the thresholds are written in
REFERENCE = "minilm-int8"


def search_cosines(question: np.ndarray, memories: list[Any], packed: dict[str, bytes]) -> Any:
    """Each memory's cosine as search scores it: the larger of its own and its best
    sentence's (``sentences.best_cosines`` over the float16 vectors the graph stores)."""
    own = np.asarray([m.vector for m in memories], dtype=np.float32) @ question
    best = best_cosines(question, packed, len(question))
    return np.asarray([max(float(o), best.get(str(i), -1.0)) for i, o in enumerate(own)])


def rank_medians(model: str, conversations: list[dict[str, Any]], ranks: tuple[int, ...]) -> Any:
    """The median over the questions of the cosine at each of ``ranks``, and the model's
    name as the service records it."""
    embedder = make_embedder(model, 2, models_dir=load_settings().models_dir)
    at: dict[int, list[float]] = {r: [] for r in ranks}
    for conversation in conversations:
        memories = embed_memories(embedder, [text for _, text in conversation["turns"]])
        packed = {str(i): p for i, m in enumerate(memories) if (p := pack(m.sentences))}
        questions = embed_queries(embedder, [q for q, _, _ in conversation["questions"]])
        for question in questions:
            ordered = np.sort(search_cosines(question, memories, packed))[::-1]
            for r in ranks:
                if r <= len(ordered):
                    at[r].append(float(ordered[r - 1]))
    return embedder.name, {r: statistics.median(v) for r, v in at.items() if v}


def fit(model: dict[int, float], reference: dict[int, float]) -> tuple[float, float]:
    """The cosines that map to 0 and to 1 under the least-squares line from ``model``'s
    medians to ``reference``'s."""
    ranks = sorted(set(model) & set(reference))
    a, b = np.polyfit([model[r] for r in ranks], [reference[r] for r in ranks], 1)
    return float(-b / a), float((1 - b) / a)


def run(quick: bool) -> dict[str, Any]:
    conversations = corpus(quick)
    ranks = QUICK_RANKS if quick else RANKS
    models = [m for m in EMBEDDERS if not quick or m in (REFERENCE, "e5-small-int8")]
    raw: dict[str, dict[int, float]] = {}
    out = {}
    for model in models:  # the reference first (EMBEDDERS' order)
        name, raw[model] = rank_medians(model, conversations, ranks)
        floor, ceiling = fit(raw[model], raw[REFERENCE]) if model != REFERENCE else (0.0, 1.0)
        used = scale_of(name)
        out[model] = {
            "name": name,
            "medians": raw[model],
            "fitted": {"floor": floor, "ceiling": ceiling},
            "in_use": {"floor": used.floor, "ceiling": used.ceiling},
            "mapped": {r: used.of(c) for r, c in raw[model].items()},
        }
        print(model, out[model], flush=True)
    return {
        "run": run_info(),
        "quick": quick,
        "ranks": list(ranks),
        "questions": sum(len(c["questions"]) for c in conversations),
        "models": out,
    }


def report(results: dict[str, Any]) -> None:
    ranks = results["ranks"]
    run = results["run"]
    lines = [
        "`python -m bench.relevance`: every model embeds the LoCoMo dev turns as the service "
        "stores them and the questions as it searches; per question every turn of its "
        "conversation is scored as search scores it (own or best sentence cosine), and each "
        f"column is the median over {results['questions']} questions of the cosine at that "
        "rank. The fitted scale is the least-squares line onto MiniLM int8's medians, given as "
        "the cosines it maps to 0 and 1; the mapped row is the model's medians through the "
        "scale `graphmem/memory/search/relevance.py` uses. "
        f"{run['date']}, commit {run['commit']}.",
        "",
        "| model | " + " | ".join(f"rank {r}" for r in ranks) + " | fitted 0 / 1 | in use 0 / 1 |",
        "|---|" + "---|" * len(ranks) + "---|---|",
    ]
    for model, m in results["models"].items():
        cos = " | ".join(f"{m['medians'][str(r)]:.3f}" for r in ranks)
        mapped = " | ".join(f"{m['mapped'][str(r)]:.3f}" for r in ranks)
        fitted, used = m["fitted"], m["in_use"]
        lines.append(
            f"| `{model}` cosine | {cos} | {fitted['floor']:.3f} / {fitted['ceiling']:.3f} | "
            f"{used['floor']:.3f} / {used['ceiling']:.3f} |"
        )
        lines.append(f"| `{model}` relevance | {mapped} | | |")
    update_section("relevance", "\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = run(args.quick)
    # JSON keys are strings: report from what was written, as a reader of the file would
    results = json.loads(json.dumps(results))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        return
    save_json("relevance", results)
    report(results)


if __name__ == "__main__":
    main()
