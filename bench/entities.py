"""Entity extraction: NER throughput (alone, and during enrichment) and the duplicate rate.

Corpus: the turns of the LoCoMo dev conversations, read at run time from
``../shared/bench/locomo-dev.json`` (never copied into the project).

1. spaCy throughput in docs/s: as enrichment runs it (``EntityExtractor``: NER on every
   text, the tagger and parser only for texts with two or more entities), and for
   comparison the whole pipeline on every text and NER alone;
2. enrichment during a spill on the real stack: items/s spilled with entity memory on
   and off (embedding + graph writes either way), so the NER share is visible;
3. resolution: distinct entities when keyed by exact surface text versus graphmem's keys,
   and the residual duplicate rate (one normalised name under several types);
4. write cost as one entity's mentions grow: the entity store's write of ten new
   memories mentioning an entity that already has N mentions (upsert, then the counts
   added from the new edges), against recounting the entity from all its edges
   (``entity/refresh_counts``, what every write ran before 2026-11-28). Side by side,
   medians of seven writes at each N.

    .venv/bin/python -m bench.entities [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.lib.graph import run_cypher
from bench.lib.locomo import turns
from bench.lib.measures import extractor_throughput, timed_spill
from bench.lib.report import run_info, save_json, update_section
from graphmem.enrich.ner import EntityExtractor, load_nlp, normalise
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.entities.memory import Resolver
from graphmem.settings import load_settings


def throughput(texts: list[str], disable: list[str], repeats: int) -> float:
    nlp = load_nlp()
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _doc in nlp.pipe(texts, batch_size=64, disable=disable):
            pass
        rates.append(len(texts) / (time.perf_counter() - started))
    return statistics.median(rates)


def duplicates(texts: list[str]) -> dict[str, Any]:
    extractor = EntityExtractor()
    resolver = Resolver([])
    surfaces: set[tuple[str, str]] = set()
    keys: set[str] = set()
    types_of_name: dict[str, set[str]] = defaultdict(set)
    mentions = 0
    for found in extractor.extract(texts):
        for m in found.mentions:
            mentions += 1
            surfaces.add((m.surface, m.type))
            key, _ = resolver.resolve(m.surface, m.type)
            keys.add(key)
            types_of_name[normalise(m.surface)].add(m.type)
    residual = sum(len(t) - 1 for t in types_of_name.values())
    return {
        "mentions": mentions,
        "entities_by_surface": len(surfaces),
        "entities_resolved": len(keys),
        "variants_merged": len(surfaces) - len(keys),
        "residual_duplicates": residual,
        "residual_duplicate_rate": round(residual / len(keys), 4) if keys else 0.0,
    }


async def spill_rate(texts: list[str], entities: bool) -> float:
    settings = load_settings(entities_enabled=entities)
    service = MemoryBuilder.from_settings(settings).with_config(autoSpillEnabled=False).build()
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    try:
        await service.migrate()
        rate = await timed_spill(service, tenant, "bench", texts)
        await service.erasure.forget_user(tenant, "bench")  # leave nothing behind
        return rate
    finally:
        await service.close()


async def write_cost(sizes: list[int], repeats: int = 7) -> list[dict[str, Any]]:
    """Milliseconds of a ten-memory entity write at each size of the entity's mentions,
    with the counts added (now) and recounted (before)."""
    service = MemoryBuilder.from_settings(load_settings()).build()
    assert service.entities is not None
    store = service.entities.store
    tenant, key = f"bench-{uuid.uuid4().hex[:8]}", "PERSON|bob"
    seeded, fresh = 0, 10**7  # memory ids: the seeded ones below, the timed ones above
    rows = []
    try:
        await service.migrate()
        for size in sizes:
            await run_cypher(
                "entity_mentions_seed",
                tenant=tenant,
                key=key,
                mention=True,
                **{"from": seeded, "to": size},
            )
            seeded = size
            await store.refresh(tenant, [key])
            timings: dict[str, list[float]] = {"added": [], "recounted": []}
            for _ in range(repeats):
                for way, ms in timings.items():
                    ids = [f"m{i}" for i in range(fresh, fresh + 10)]
                    await run_cypher(
                        "entity_mentions_seed",
                        tenant=tenant,
                        key=key,
                        mention=False,
                        **{"from": fresh, "to": fresh + 10},
                    )
                    fresh += 10
                    mentions = [
                        {
                            "memoryId": i,
                            "key": key,
                            "name": "Bob",
                            "type": "PERSON",
                            "label": "PERSON",
                            "surface": "Bob",
                            "via": "exact",
                            "start": 0,
                            "end": 3,
                            "at": None,
                        }
                        for i in ids
                    ]
                    started = time.perf_counter()
                    await store.write(tenant, mentions, [], [])
                    if way == "recounted":
                        await store.refresh(tenant, [key])
                    ms.append((time.perf_counter() - started) * 1000)
            rows.append(
                {"mentions": size}
                | {way: round(statistics.median(ms), 1) for way, ms in timings.items()}
            )
            print(rows[-1], flush=True)
    finally:
        await run_cypher("entity_mentions_drop", auto_commit=True, tenant=tenant)
        await service.close()
    return rows


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small corpus (CI smoke)")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    args = parser.parse_args()
    texts = turns(60 if args.quick else None)
    repeats = 1 if args.quick else 3
    enrich_pipes = throughput(texts, ["lemmatizer", "attribute_ruler"], repeats)
    ner_only = throughput(texts, ["lemmatizer", "attribute_ruler", "tagger", "parser"], repeats)
    as_enrichment = extractor_throughput(texts, repeats)
    resolution = duplicates(texts)
    with_entities = await spill_rate(texts, entities=True)
    without = await spill_rate(texts, entities=False)
    writes = await write_cost([100, 1000] if args.quick else [1000, 10_000, 50_000])
    results: dict[str, Any] = {
        "run": run_info(),
        "docs": len(texts),
        "ner_docs_per_s": {
            "tok2vec+tagger+parser+ner": round(enrich_pipes, 1),
            "tok2vec+ner": round(ner_only, 1),
            "extractor": round(as_enrichment, 1),
        },
        "spill_items_per_s": {
            "entities_on": round(with_entities, 1),
            "entities_off": round(without, 1),
        },
        "resolution": resolution,
        "entity_write_ms": writes,
    }
    print(json.dumps(results, indent=2))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        return
    save_json("entities", results)
    run, r = results["run"], resolution
    update_section(
        "entities",
        f"""## Entity memory: NER throughput and duplicate rate

`bench/entities.py` over the {len(texts)} turns of the LoCoMo dev conversations (read from
`../shared/bench`), en_core_web_sm 3.8, medians of {repeats} runs. {run["date"]}, commit
{run["commit"]}, {run["machine"]}.

| measurement | docs/s or items/s |
|---|---|
| spaCy as enrichment runs it (NER on every text; tagger and parser only where \
two or more entities could be related) | {as_enrichment:.0f} docs/s |
| spaCy, the whole pipeline on every text (tok2vec, tagger, parser, ner) \
| {enrich_pipes:.0f} docs/s |
| spaCy, NER alone (tok2vec, ner; no relations without the parser) | {ner_only:.0f} docs/s |
| spill with entity memory (embed + NER + relations + graph writes) | {with_entities:.0f} items/s |
| spill without entity memory (embed + graph writes) | {without:.0f} items/s |

Resolution over {r["mentions"]} mentions: {r["entities_by_surface"]} entities if keyed by exact
surface text, {r["entities_resolved"]} with graphmem's keys ({r["variants_merged"]} variants
merged). Residual duplicates — one normalised name under several types, such as a name NER
tags PERSON in one turn and ORGANIZATION in another — {r["residual_duplicates"]}
({100 * r["residual_duplicate_rate"]:.1f}% of entities); `mergeEntities` folds those by hand.

Writing ten new memories' mentions of an entity that already has N mentions, in
milliseconds (medians of seven; the store's write, which adds the new edges to the
counts, and the same write followed by a recount of all the entity's edges, which every
write did before 2026-11-28):

| mentions of the entity | write (counts added) | write + recount (before) |
|---|---|---|
"""
        + "\n".join(
            f"| {w['mentions']:,} | {w['added']:.1f} | {w['recounted']:.1f} |" for w in writes
        ),
    )


if __name__ == "__main__":
    asyncio.run(main())
