"""Voting, structure signatures and reflection patterns: pure functions over plain data,
so their results can be checked by hand. ``episodes.py`` wires them to the graph."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from graphmem.errors import BadInput

#: (key, value) → keep? Drops stale mappings, such as columns that no longer exist.
StaleFilter = Callable[[str, str], bool]


class StepStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


def compute_signature(structure: Iterable[str] | dict[str, Any]) -> str:
    """A structure signature, like a file signature: a short hash of the sorted,
    lower-cased names (columns, keys, fields) that describe the input."""
    names = structure.keys() if isinstance(structure, dict) else structure
    parts = sorted({str(n).strip().lower() for n in names if str(n).strip()})
    if not parts:
        raise BadInput("structure: at least one name is required", field="structure")
    return hashlib.md5(":".join(parts).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Vote:
    key: str
    value: str
    confidence: float
    votes: float
    alternatives: dict[str, float]


def aggregate_votes(
    episodes: Sequence[tuple[dict[str, str], float]], keep: StaleFilter | None = None
) -> list[Vote]:
    """For every key, each episode votes for its value with its similarity; the winner
    is the value with the highest total, and its confidence is its share of all the votes
    cast for that key."""
    tally: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for mappings, similarity in episodes:
        if similarity <= 0:
            continue  # an unrelated episode has no say
        for key, value in mappings.items():
            if keep is not None and not keep(key, value):
                continue
            tally[key][value] += similarity
    result = []
    for key in sorted(tally):
        options = tally[key]
        winner = max(sorted(options), key=lambda v: options[v])
        total = sum(options.values())
        result.append(Vote(key, winner, options[winner] / total, options[winner], dict(options)))
    return result


def _norm_action(action: str) -> str:
    return re.sub(r"\s+", " ", action.strip().lower())


@dataclass
class Pattern:
    kind: str
    pattern: str
    support: int
    confidence: float
    evidence: list[str]
    signature: str | None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        raw = f"{self.kind}|{self.signature or '*'}|{self.pattern}"
        return hashlib.sha1(raw.encode()).hexdigest()


def find_patterns(episodes: Sequence[dict[str, Any]]) -> list[Pattern]:
    """Cross-episode patterns. Each item: ``{"episode": {...}, "steps": [{...}]}``.

    - ``recovery``: a step that failed, followed in the same task by a step that
      succeeded — the alternative that worked;
    - ``repeated_failure``: an action that failed in two or more episodes;
    - ``success_rate``: per structure signature, with two or more episodes;
    - ``summary``: per signature (or all unsigned episodes), one consolidated lesson
      naming what failed, what worked instead and what went well, derived from every
      episode of the group.
    """
    patterns: list[Pattern] = []
    groups: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    recoveries: dict[tuple[str | None, str, str], list[str]] = defaultdict(list)
    failures: dict[tuple[str | None, str], set[str]] = defaultdict(set)
    labels: dict[str, str] = {}
    for item in episodes:
        episode, steps = item["episode"], sorted(item["steps"], key=lambda s: s["order"])
        signature = episode.get("signature")
        groups[signature].append(item)
        failed_open: list[dict[str, Any]] = []
        for step in steps:
            action = _norm_action(step["action"])
            labels.setdefault(action, step["action"].strip())
            if step["status"] == StepStatus.FAILED:
                failed_open.append(step)
                failures[(signature, action)].add(episode["id"])
            elif step["status"] == StepStatus.SUCCEEDED and failed_open:
                for failed_step in failed_open:
                    key = (signature, _norm_action(failed_step["action"]), action)
                    if episode["id"] not in recoveries[key]:
                        recoveries[key].append(episode["id"])
                failed_open = []
    for (signature, failed, alternative), proof in recoveries.items():
        total = len(groups[signature])
        patterns.append(
            Pattern(
                "recovery",
                f"after '{labels[failed]}' failed, '{labels[alternative]}' succeeded",
                len(proof),
                len(proof) / total,
                proof,
                signature,
                {"failedAction": labels[failed], "alternative": labels[alternative]},
            )
        )
    for (signature, action), failed_in in failures.items():
        if len(failed_in) >= 2:
            total = len(groups[signature])
            patterns.append(
                Pattern(
                    "repeated_failure",
                    f"'{labels[action]}' keeps failing",
                    len(failed_in),
                    len(failed_in) / total,
                    sorted(failed_in),
                    signature,
                    {"action": labels[action]},
                )
            )
    for signature, items in groups.items():
        ids = [i["episode"]["id"] for i in items]
        succeeded = sum(1 for i in items if i["episode"].get("success"))
        if signature is not None and len(items) >= 2:
            patterns.append(
                Pattern(
                    "success_rate",
                    f"{succeeded} of {len(items)} episodes with signature {signature} succeeded",
                    len(items),
                    succeeded / len(items),
                    ids,
                    signature,
                    {"succeeded": succeeded, "episodes": len(items)},
                )
            )
        patterns.append(_summary(signature, items, recoveries, labels))
    return patterns


def _summary(
    signature: str | None,
    items: Sequence[dict[str, Any]],
    recoveries: dict[tuple[str | None, str, str], list[str]],
    labels: dict[str, str],
) -> Pattern:
    ids = [i["episode"]["id"] for i in items]
    succeeded = sum(1 for i in items if i["episode"].get("success"))
    parts = [f"across {len(items)} episodes, {succeeded} succeeded"]
    recovered = [(f, a) for (s, f, a) in recoveries if s == signature]
    for failed, alternative in recovered:
        parts.append(f"'{labels[failed]}' failed and '{labels[alternative]}' worked instead")
    went_well = [
        f"{i['episode'].get('outcome')}"
        for i in items
        if i["episode"].get("success") and i["episode"].get("outcome")
    ]
    if went_well:
        parts.append("went well: " + "; ".join(sorted(set(went_well))))
    lessons = sorted({lesson for i in items for lesson in i["episode"].get("lessons") or []})
    return Pattern(
        "summary",
        "; ".join(parts),
        len(items),
        succeeded / len(items),
        ids,
        signature,
        {
            "lessons": lessons,
            "recoveries": [
                {"failedAction": labels[f], "alternative": labels[a]} for f, a in recovered
            ],
        },
    )
