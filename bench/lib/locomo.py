"""The LoCoMo dev split (read at run time from ``../shared/bench/locomo-dev.json``, never
copied here): its turns and questions, its turns as memories through the GraphQL API, and
recall scored as LoCoMo scores it (evidence ids cleaned as the data's README says,
recall_acc at 5 and 10, per category).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import httpx

from bench.lib.loadgen import refused_for_now, retry_after_ms
from bench.lib.report import ROOT

LOCOMO = ROOT.parent / "shared" / "bench" / "locomo-dev.json"


def texts_and_questions() -> tuple[list[str], list[str]]:
    """Texts to store and questions to ask: LoCoMo when present, else generated."""
    try:
        data = json.loads(LOCOMO.read_text())
    except (OSError, ValueError):
        words = "budget meeting Paris launch design review hiring Caroline Melanie trip".split()
        texts = [" ".join(random.sample(words, 5)) + f" note {n}" for n in range(500)]
        return texts, [" ".join(random.sample(words, 3)) for _ in range(100)]
    texts, questions = [], []
    for conversation in data:
        conv = conversation["conversation"]
        n = 1
        while f"session_{n}" in conv:
            texts += [t["text"] for t in conv[f"session_{n}"] if t.get("text")]
            n += 1
        questions += [qa["question"] for qa in conversation["qa"]]
    return texts, questions


def turns(limit: int | None = None) -> list[str]:
    """The text of every turn, in order (the first ``limit``)."""
    data = json.loads(LOCOMO.read_text())
    texts = []
    for conversation in data:
        conv = conversation["conversation"]
        n = 1
        while f"session_{n}" in conv:
            texts += [t["text"] for t in conv[f"session_{n}"] if t.get("text")]
            n += 1
    return texts[:limit] if limit else texts


CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


ADD = "mutation($i: [AddMemoryInput!]!) { addMemories(inputs: $i) { id } }"
SPILL = "mutation($s: ID!) { spill(sessionId: $s, count: 5000) { spilledCount } }"


def session_time(raw: str) -> datetime:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_text(turn: dict[str, Any]) -> str:
    """One memory per turn: "Speaker: text", plus " [image: caption]" when there is one."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def recall_row(category: int, ranked: list[Any], evidence: list[str]) -> dict[str, Any]:
    """LoCoMo's recall_acc at 5 and 10 for one question, from the ranked dia_ids, and
    session-level recall at 10: the share of the evidence's sessions (``D3`` of
    ``D3:13``) that some of the 10 results come from."""
    sessions = {e.split(":")[0] for e in evidence}
    found = {str(r).split(":")[0] for r in ranked[:10] if r}
    return {
        "category": category,
        "r5": len(set(ranked[:5]) & set(evidence)) / len(evidence),
        "r10": len(set(ranked[:10]) & set(evidence)) / len(evidence),
        "s10": len(sessions & found) / len(sessions),
    }


def evidence_ids(raw: list[str], known: set[str]) -> list[str]:
    out: list[str] = []
    for entry in raw:
        for part in re.split(r"[;,\s]+", entry):
            match = _EVIDENCE.fullmatch(part.strip()) or _EVIDENCE.search(part)
            if match:
                dia = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia in known and dia not in out:
                    out.append(dia)
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0.0

    main = [r for r in rows if r["category"] != 5]
    by_category: dict[str, Any] = {}
    groups: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["category"]].append(r)
    for cat, items in sorted(groups.items()):
        by_category[CATEGORIES.get(cat, str(cat))] = {
            "questions": len(items),
            "r5": mean([r["r5"] for r in items]),
            "r10": mean([r["r10"] for r in items]),
        }
    return {
        "questions": len(main),
        "r5": mean([r["r5"] for r in main]),
        "r10": mean([r["r10"] for r in main]),
        "session_r10": mean([r["s10"] for r in main]),
        "by_category": by_category,
    }


class Client:
    def __init__(self, http: httpx.AsyncClient, key: str) -> None:
        self.http, self.key = http, key

    async def gql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """The answer's data. A refusal for now (RATE_LIMITED: over the key's cost per
        second, or its share of a busy server) is retried when it says, as a client
        should; any other error raises."""
        for _ in range(20):
            response = await self.http.post(
                "/graphql",
                json={"query": query, "variables": variables},
                headers={"Authorization": f"Bearer {self.key}"},
            )
            body: dict[str, Any] = response.json()
            if refused_for_now(body):
                await asyncio.sleep(min(retry_after_ms(body, default=100), 5_000) / 1000)
                continue
            if body.get("errors"):
                raise RuntimeError(body["errors"])
            return body["data"]  # type: ignore[no-any-return]
        raise RuntimeError(f"refused 20 times in a row: {body['errors']}")


async def ingest(client: Client, conversation: dict[str, Any]) -> set[str]:
    sample, conv = conversation["sample_id"], conversation["conversation"]
    known: set[str] = set()
    n = 1
    while f"session_{n}" in conv:
        when = session_time(conv[f"session_{n}_date_time"]).isoformat()
        inputs = []
        for turn in conv[f"session_{n}"]:
            text = turn_text(turn)
            known.add(turn["dia_id"])
            inputs.append(
                {
                    "sessionId": f"{sample}-s{n}",
                    "userId": sample,
                    "content": text,
                    "occurredAt": when,
                    "metadata": {"dia_id": turn["dia_id"], "speaker": turn["speaker"]},
                }
            )
        for start in range(0, len(inputs), 500):
            await client.gql(ADD, {"i": inputs[start : start + 500]})
        await client.gql(SPILL, {"s": f"{sample}-s{n}"})
        n += 1
    return known
