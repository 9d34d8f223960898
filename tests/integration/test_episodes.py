"""Episodic memory through the API (docs/concepts.md#episodes)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from tests.conftest import Api

RECORD = """mutation($i: EpisodeInput!) { recordEpisode(input: $i) {
  id taskId outcome success signature lessons mappings metrics } }"""
TASK = """query($id: ID!) { task(id: $id) { id description steps { action status order result }
  episodeIds } }"""
REFLECT = """mutation { reflect { id kind pattern support confidence evidence details } }"""


async def test_episodes_give_a_reflection_naming_failure_and_alternative(
    api: Api,
) -> None:
    flight = (
        await api.data(
            RECORD,
            {
                "i": {
                    "description": "Book a flight to Paris",
                    "outcome": "flight booked",
                    "success": True,
                    "steps": [
                        {
                            "action": "book flight AF1234",
                            "result": "unavailable",
                            "status": "FAILED",
                        },
                        {
                            "action": "book flight AF5678",
                            "result": "confirmed",
                            "status": "SUCCEEDED",
                        },
                    ],
                    "lessons": ["check seat availability before booking"],
                    "metrics": {"attempts": 2},
                }
            },
        )
    )["recordEpisode"]
    dinner = (
        await api.data(
            RECORD,
            {
                "i": {
                    "description": "Recommend a restaurant in Paris",
                    "outcome": "positive feedback",
                    "success": True,
                    "steps": [
                        {
                            "action": "recommend Le Chat Noir",
                            "result": "positive feedback",
                            "status": "SUCCEEDED",
                        }
                    ],
                }
            },
        )
    )["recordEpisode"]
    assert flight["metrics"] == {"attempts": 2}
    task = (await api.data(TASK, {"id": flight["taskId"]}))["task"]
    assert [(s["order"], s["action"], s["status"]) for s in task["steps"]] == [
        (0, "book flight AF1234", "FAILED"),
        (1, "book flight AF5678", "SUCCEEDED"),
    ]
    assert task["episodeIds"] == [flight["id"]]

    reflections = {r["kind"]: r for r in (await api.data(REFLECT))["reflect"]}
    summary = reflections["summary"]
    assert "book flight AF1234" in summary["pattern"]
    assert "book flight AF5678" in summary["pattern"]
    assert sorted(summary["evidence"]) == sorted([flight["id"], dinner["id"]])
    recovery = reflections["recovery"]
    assert recovery["details"] == {
        "failedAction": "book flight AF1234",
        "alternative": "book flight AF5678",
    }
    assert recovery["evidence"] == [flight["id"]]
    # reflect is idempotent: the same reflections, updated in place
    again = (await api.data(REFLECT))["reflect"]
    assert sorted(r["id"] for r in again) == sorted(r["id"] for r in reflections.values())
    stored = (await api.data('{ reflections(kind: "summary") { id evidence } }'))["reflections"]
    assert [r["id"] for r in stored] == [summary["id"]]


async def test_prior_knowledge_votes_by_similarity(api: Api) -> None:
    columns = ["Qty", "Desc", "SKU"]
    episodes = [
        ("Import monthly sales spreadsheet", columns, {"Qty": "quantity", "Desc": "description"}),
        (
            "Import weekly sales spreadsheet",
            ["Qty", "Desc"],
            {"Qty": "amount", "Desc": "description"},
        ),
        ("Load supplier price list", ["Part", "Qty"], {"Qty": "amount", "SKU": "part_number"}),
    ]
    for description, structure, mappings in episodes:
        await api.data(
            RECORD,
            {
                "i": {
                    "description": description,
                    "outcome": "imported",
                    "success": True,
                    "structure": structure,
                    "mappings": mappings,
                }
            },
        )
    from graphmem.memory.episodes.patterns import compute_signature

    signature = compute_signature(columns)
    query = """query($q: String!, $s: String, $v: [String!]) {
      priorKnowledge(query: $q, signature: $s, validValues: $v) {
        votes { key value confidence votes alternatives }
        episodes { similarity cosine signatureMatch episode { mappings signature } } } }"""
    result = (await api.data(query, {"q": "import the monthly sales sheet", "s": signature}))[
        "priorKnowledge"
    ]
    rows = result["episodes"]
    assert len(rows) == 3
    sims = [r["similarity"] for r in rows]
    assert len(set(sims)) == 3, "the three episodes should be unequally similar"
    for r in rows:  # similarity = cosine + 0.6 for the exact signature match
        boost = 0.6 if r["episode"]["signature"] == signature else 0.0
        assert r["signatureMatch"] is (boost > 0)
        assert r["similarity"] == pytest.approx(r["cosine"] + boost)

    # the vote, by hand: every episode adds its similarity to the value it chose
    tally: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in rows:
        if r["similarity"] > 0:
            for key, value in r["episode"]["mappings"].items():
                tally[key][value] += r["similarity"]
    votes = {v["key"]: v for v in result["votes"]}
    assert set(votes) == set(tally)
    for key, options in tally.items():
        winner = max(options, key=lambda v: options[v])
        assert votes[key]["value"] == winner
        assert votes[key]["confidence"] == pytest.approx(options[winner] / sum(options.values()))
    assert votes["Qty"]["value"] == "quantity"  # the signature match outweighs two others

    stale = await api.data(
        query,
        {
            "q": "import the monthly sales sheet",
            "s": signature,
            "v": ["amount", "description", "part_number"],
        },
    )
    qty = {v["key"]: v for v in stale["priorKnowledge"]["votes"]}["Qty"]
    assert qty["value"] == "amount" and qty["confidence"] == 1.0


async def test_steps_need_an_existing_task_and_an_action(api: Api) -> None:
    add = """mutation($t: ID!, $a: String!) { addStep(taskId: $t, input: {action: $a}) { id } }"""
    body = await api.gql(add, {"t": "task_missing", "a": "do it"})
    assert body["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    task = (await api.data('mutation { createTask(description: "tidy up") { id } }'))["createTask"]
    body = await api.gql(add, {"t": task["id"], "a": "  "})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    body = await api.gql(RECORD, {"i": {"outcome": "x", "success": True}})
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
