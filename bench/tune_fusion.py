"""How the hybrid-recall weights were chosen: a grid search on the LoCoMo dev split.

Ingests the dev conversations like ``bench/locomo.py``, fetches every question's raw
candidates once (vector top 100, BM25 top 100, entity overlap, the neighbouring turns of
all of them), then scores each weight combination offline with the same ``base_scores``
and ``add_context`` functions recall uses. Prints the best combinations; nothing here is
specific to these conversations, and the chosen weights are to be checked on held-out
data. The link step (``Weights.links``) is left out (off here): its
seeds depend on the other weights and its links are a graph read, so its weight was
chosen by live ``bench/locomo.py`` runs, each conversation's figures side by side
(docs/recall.md, "Links"). ``model_folds`` chooses what ``MODEL_WEIGHTS`` holds for the
model that embedded the run (``GRAPHMEM_EMBEDDER``): the context window and the vector
slots, each conversation held out in turn. ``ceiling`` says how far any reordering of
the candidates could take recall.

    .venv/bin/python -m bench.tune_fusion [--quick] [--cache FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import json
import pickle
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.lib.locomo import LOCOMO, Client, evidence_ids, ingest
from graphmem.api.http.app import create_app
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.search.fusion import add_context, base_scores, with_vector_slots
from graphmem.memory.search.querytext import asks_inference
from graphmem.memory.search.weights import Weights, query_weights, weights_for
from graphmem.settings import load_settings


async def raw_candidates(service: Memory, tenant: str, user: str, question: str) -> dict[str, Any]:
    """What recall fuses for one question, before any weight is applied (the same
    service steps ``search`` runs), with neighbours three turns to a side."""
    query = RecallQuery(query=question, user_id=user, limit=10)
    sources, _ = await service.ranker.sources(tenant, query)
    vector_hits = [(t, best) for t, _, _, best in sources.vector]
    text_hits = [(t, bm25, best) for t, bm25, _, best in sources.text]
    entity_hits = await service.ranker.entity_hits(tenant, query)
    ids = list({t.id for t, _ in vector_hits} | {t.id for t, _, _ in text_hits})
    near = await sources.near(ids, 3)
    every = list({*ids, *(t.id for _, t, _ in near)})
    dia = {i.id: i.metadata.get("dia_id") for i in await service.graph.get(tenant, every)}
    return {
        "query": question,
        "vector": vector_hits,
        "text": text_hits,
        "entity": entity_hits,
        "near": near,
        "dia": dia,
    }


def within(pool: dict[str, Any], near: list[Any], window: int) -> list[Any]:
    """Of neighbours fetched three to a side, the ``window`` closest on each side."""
    kept = []
    groups: dict[str, list[Any]] = {}
    for n in near:
        groups.setdefault(n[0], []).append(n)
    for of, items in groups.items():
        anchor = pool[of].item.seq
        before = [n for n in items if n[1].seq < anchor]
        after = [n for n in items if n[1].seq > anchor]
        kept += (
            sorted(before, key=lambda n: -n[1].seq)[:window]
            + sorted(after, key=lambda n: n[1].seq)[:window]
        )
    return kept


def rank(raw: dict[str, Any], w: Weights, limit: int = 10) -> list[str]:
    query = raw.get("query", "")
    w = query_weights(query, w)
    pool = base_scores(raw["vector"], raw["text"], raw["entity"], query, w)
    if w.context > 0 and pool:
        head = {
            c.item.id
            for c in sorted(pool.values(), key=lambda c: c.base, reverse=True)[: w.context_pool]
        }
        near = [n for n in raw["near"] if n[0] in head]
        near = within(pool, near, w.context_window)
        add_context(pool, near, w)
    ordered = sorted(pool.values(), key=lambda c: (c.score, c.cosine), reverse=True)
    ordered = with_vector_slots(ordered, lambda c: c.item.id, raw["vector"], 10, w.vector_slots)
    return [raw["dia"].get(c.item.id) for c in ordered[:limit]]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--cache",
        type=Path,
        help="keep the fetched candidates in this file (pickle) and reuse them on the next run",
    )
    args = parser.parse_args()
    if args.cache and args.cache.exists():
        model, cases = pickle.loads(args.cache.read_bytes())
        search(cases, model)
        return
    data = json.loads(LOCOMO.read_text())[: 1 if args.quick else None]
    tenant, key = f"tune-{uuid.uuid4().hex[:8]}", f"bench-{uuid.uuid4().hex}"
    settings = load_settings(
        api_keys={key: tenant}, maintenance_enabled=False, memory={"autoSpillEnabled": False}
    )
    app = create_app(settings)
    cases = []
    async with app.router.lifespan_context(app):
        service: Memory = app.state.service
        model = service.ranker.embedder.name
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://bench", timeout=300
        ) as http:
            client = Client(http, key)
            for conversation in data:
                known = await ingest(client, conversation)
                for qa in conversation["qa"]:
                    evidence = evidence_ids(qa.get("evidence") or [], known)
                    if evidence and int(qa["category"]) != 5:
                        raw = await raw_candidates(
                            service, tenant, conversation["sample_id"], qa["question"]
                        )
                        cases.append(
                            (int(qa["category"]), set(evidence), raw, conversation["sample_id"])
                        )
            for conversation in data:
                await client.gql(
                    "mutation($u: ID!) { forgetUser(userId: $u) { sessions } }",
                    {"u": conversation["sample_id"]},
                )
    if args.cache:
        args.cache.write_bytes(pickle.dumps((model, cases)))
    search(cases, model)


#: recall's defaults as this grid sees them (without the link step)
DEFAULTS = dataclasses.replace(Weights(), links=0.0)

GRID = list(
    itertools.product(
        [0.45, 0.55, 0.65],
        [0.25, 0.35, 0.5],
        [1, 2],
        [1.0, 1.5, 2.0],
        [0.0, 0.1, 0.2, 0.4],
        [0.0, 0.15, 0.3],
    )
)


def weights(
    text: float, ctx: float, window: int, session: float, time: float, speaker: float
) -> Weights:
    # text and vector weights sum to 1 (only their ratio matters beside the others)
    return Weights(
        links=0.0,
        text=text,
        vector=round(1 - text, 2),
        context=ctx,
        context_window=window,
        session=session,
        time=time,
        speaker=speaker,
    )


def recall(case: Any, w: Weights) -> float:
    """R@10 of one case: the share of its evidence among the ten ranked first."""
    _, evidence, raw, _ = case
    return len(set(rank(raw, w)) & evidence) / len(evidence)


def score(cases: list[Any], w: Weights) -> tuple[float, float]:
    """R@10 over every case, and over the multi-hop ones (category 1)."""
    r10 = [recall(c, w) for c in cases]
    multi = [recall(c, w) for c in cases if c[0] == 1]
    return sum(r10) / max(len(r10), 1), sum(multi) / max(len(multi), 1)


def search(cases: list[Any], model: str) -> None:
    scored = sorted(
        ((*score(cases, weights(*g)), weights(*g)) for g in GRID),
        key=lambda s: s[0],
        reverse=True,
    )
    for overall, multi, w in scored[:10]:
        print(
            f"R@10 {overall:.3f}  multi-hop {multi:.3f}  text {w.text} vector {w.vector} "
            f"context {w.context} pool {w.context_pool} window {w.context_window} "
            f"decay {w.context_decay} session {w.session} time {w.time} speaker {w.speaker}"
        )
    default = DEFAULTS
    for overall, multi, w in scored:
        if w == default:
            print(f"current defaults: R@10 {overall:.3f}  multi-hop {multi:.3f}")
    cross_validate(cases)
    inference_folds(cases)
    model_folds(cases, model)
    ceiling(cases, weights_for(model))


def cross_validate(cases: list[Any]) -> None:
    """Each conversation's best weights scored on the other one: how the grid's choice
    generalises, beside how well the defaults do on each."""
    conversations = sorted({c[3] for c in cases})
    if len(conversations) < 2:
        return
    for held_out in conversations:
        tune = [c for c in cases if c[3] != held_out]
        test = [c for c in cases if c[3] == held_out]
        best = max((weights(*g) for g in GRID), key=lambda w: score(tune, w)[0])
        tuned_on, _ = score(tune, best)
        held, held_multi = score(test, best)
        default, default_multi = score(test, DEFAULTS)
        print(
            f"fold: tuned without {held_out} (R@10 {tuned_on:.3f} there), on {held_out}: "
            f"R@10 {held:.3f} multi-hop {held_multi:.3f}  (defaults: {default:.3f} / "
            f"{default_multi:.3f})  chosen text {best.text} context {best.context} "
            f"window {best.context_window} session {best.session} time {best.time} "
            f"speaker {best.speaker}"
        )


#: what ``model_folds`` chooses for a model: turns of context to a side, and the share
#: of the ten kept for the vector retriever's best hits
MODEL_GRID = list(itertools.product([1, 2], [0.0, 0.1, 0.2, 0.3]))


def model_folds(cases: list[Any], model: str) -> None:
    """``MODEL_WEIGHTS``' choices for the model whose candidates these are (the context
    window and ``vector_slots``), everything else at MiniLM's defaults: each
    conversation's best scored on the other. Ties go to the smaller change from
    MiniLM's (window 1, no slots)."""
    conversations = sorted({c[3] for c in cases})
    model_default = weights_for(model)
    print(
        f"model {model}: window {model_default.context_window} "
        f"vector_slots {model_default.vector_slots} (MODEL_WEIGHTS)"
    )

    def variant(window: int, slots: float) -> Weights:
        return dataclasses.replace(DEFAULTS, context_window=window, vector_slots=slots)

    for window, slots in MODEL_GRID:
        by = {
            c: score([x for x in cases if x[3] == c], variant(window, slots)) for c in conversations
        }
        cells = "  ".join(f"{c} {r:.3f} / {m:.3f}" for c, (r, m) in by.items())
        print(f"  window {window} vector_slots {slots}: R@10 / multi-hop  {cells}")
    if len(conversations) < 2:
        return
    for held_out in conversations:
        tune = [c for c in cases if c[3] != held_out]
        test = [c for c in cases if c[3] == held_out]
        window, slots = max(
            MODEL_GRID,
            key=lambda g: (round(score(tune, variant(*g))[0], 6), -g[0], -g[1]),
        )
        held, held_multi = score(test, variant(window, slots))
        print(
            f"fold: chosen without {held_out}: window {window} vector_slots {slots}; on "
            f"{held_out}: R@10 {held:.3f} multi-hop {held_multi:.3f}"
        )


def ceiling(cases: list[Any], w: Weights) -> dict[str, dict[str, float]]:
    """How much of the evidence the retrievers put within reach, per conversation and
    over all: hybrid (``w``, link step off) at 10, 20 and 30 places; each retriever's own
    top 10 and 20; the three top-10 lists together (30 places, as if a perfect reranker
    chose among them); and every candidate fetched at all. A fusion change can only move
    hybrid@10 towards what its candidates hold."""

    def share(found: Any, evidence: set[str]) -> float:
        return len(set(found) & evidence) / len(evidence)

    rows: dict[str, list[dict[str, float]]] = {}
    for _, evidence, raw, conversation in cases:
        dia = raw["dia"]
        vector = [dia.get(t.id) for t, _ in sorted(raw["vector"], key=lambda h: -h[1])]
        text = [dia.get(t.id) for t, _, _ in sorted(raw["text"], key=lambda h: -h[1])]
        hybrid = rank(raw, w, limit=30)
        row = {
            "hybrid@10": share(hybrid[:10], evidence),
            "hybrid@20": share(hybrid[:20], evidence),
            "hybrid@30": share(hybrid, evidence),
            "vector@10": share(vector[:10], evidence),
            "vector@20": share(vector[:20], evidence),
            "bm25@10": share(text[:10], evidence),
            "bm25@20": share(text[:20], evidence),
            "three top-10s": share({*hybrid[:10], *vector[:10], *text[:10]}, evidence),
            "any candidate": share(dia.values(), evidence),
        }
        for key in (conversation, "all"):
            rows.setdefault(key, []).append(row)
    table = {
        key: {k: round(sum(r[k] for r in rs) / len(rs), 4) for k in rs[0]}
        for key, rs in sorted(rows.items())
    }
    for key, figures in table.items():
        print(f"ceiling {key}: " + "  ".join(f"{k} {v:.3f}" for k, v in figures.items()))
    return table


#: text weights for a question asking for an inference; 0.55 and above is the step off
INFERENCE_GRID = [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.45, 0.55]


def inference_folds(cases: list[Any]) -> None:
    """``Weights.inference_text``, chosen leaving one question out: the questions that ask
    for an inference are too few to split by conversation (on the dev split they are
    conv-26's open-domain questions), so each is scored with the weight that does best on
    all the others. The step changes no other question's ranking."""
    asking = [c for c in cases if asks_inference(c[2]["query"])]
    if len(asking) < 2:
        return
    by_category = dict(Counter(c[0] for c in asking))
    table = {
        t: [recall(c, dataclasses.replace(DEFAULTS, inference_text=t)) for c in asking]
        for t in INFERENCE_GRID
    }
    print(f"questions asking an inference: {len(asking)} (by category {by_category})")
    for t, hits in table.items():
        print(f"  inference text weight {t}: R@10 {sum(hits) / len(hits):.3f}")
    held = []
    for i in range(len(asking)):
        # ties go to the larger weight, the nearer to the step being off
        best = max(INFERENCE_GRID, key=lambda t: (sum(table[t]) - table[t][i], t))
        held.append(table[best][i])
    default = sum(table[DEFAULTS.inference_text]) / len(asking)
    off = sum(table[INFERENCE_GRID[-1]]) / len(asking)
    print(
        f"leave one question out: R@10 {sum(held) / len(held):.3f} "
        f"(default {DEFAULTS.inference_text}: {default:.3f}, step off: {off:.3f})"
    )


if __name__ == "__main__":
    asyncio.run(main())
