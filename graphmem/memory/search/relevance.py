"""Relevance: a model's cosine on one scale, the one the thresholds are written in.

Recall promotes a memory whose similarity to the query is above ``promoteThreshold``
(0.85), counts a recall as a hit from ``minRelevance`` (0.3), and an episode's exact
signature match adds 0.6 to its similarity. Those numbers were chosen on
all-MiniLM-L6-v2's cosines, and the models do not share a scale: a LoCoMo question's
best turn lies at a median cosine of 0.74 for MiniLM and 0.86 for e5-small, its
hundredth at 0.51 and 0.79. Read as raw cosines, every e5 result would count as a hit
and most top results would be promoted.

So each model's cosine goes through a straight line onto MiniLM's scale before it meets
a threshold or is reported as a ``similarity``: the cosine that maps to 0 (``floor``) and
the one that maps to 1 (``ceiling``), fitted by ``bench/relevance.py`` to the medians of
the cosines at the same ranks (BENCHMARKS.md, "Relevance"). Ranking is not touched: the
fusion's weights are chosen per model on the raw cosines (``weights.py``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RelevanceScale:
    #: the cosine that maps to relevance 0
    floor: float = 0.0
    #: the cosine that maps to relevance 1
    ceiling: float = 1.0

    def of(self, cosine: float) -> float:
        """``cosine`` on the relevance scale, within [0, 1]."""
        return max(0.0, min(1.0, self.unclipped(cosine)))

    def unclipped(self, cosine: float) -> float:
        """``cosine`` on the relevance scale, below 0 where the model puts it below the
        floor (an episode that far from the query does not vote)."""
        return (cosine - self.floor) / (self.ceiling - self.floor)


#: MiniLM's scale is the reference (0 and 1 map to themselves, in all three builds)
IDENTITY = RelevanceScale()

#: by the embedder's name (``Embedder.name``); bench/relevance.py, 2026-11-28
SCALES: dict[str, RelevanceScale] = {
    "bge-small-en-v1.5-onnx-int8": RelevanceScale(0.399, 0.882),
    "bge-small-en-v1.5-onnx-fp32": RelevanceScale(0.388, 0.891),
    "e5-small-v2-onnx-int8": RelevanceScale(0.674, 0.912),
}


def scale_of(model: str) -> RelevanceScale:
    """The relevance scale of the model named ``model`` (MiniLM's, and any model not
    measured, are the identity)."""
    return SCALES.get(model, IDENTITY)
