"""The relevance scale (memory/search/relevance.py): each model's cosine on the scale the
thresholds are written in."""

from __future__ import annotations

import pytest

from graphmem.enrich.e5 import E5SmallEmbedder
from graphmem.enrich.minilm import MiniLMInt8Embedder
from graphmem.memory.search.relevance import IDENTITY, SCALES, RelevanceScale, scale_of


def test_minilm_and_unmeasured_models_keep_their_cosines() -> None:
    assert scale_of(MiniLMInt8Embedder.name) is IDENTITY
    assert scale_of("a model nobody measured") is IDENTITY
    assert [IDENTITY.of(c) for c in (-0.2, 0.0, 0.3, 0.85, 1.0)] == [0.0, 0.0, 0.3, 0.85, 1.0]


def test_a_scale_maps_its_floor_to_0_its_ceiling_to_1_and_clips() -> None:
    scale = RelevanceScale(0.6, 0.9)
    assert scale.of(0.6) == 0.0 and scale.of(0.9) == pytest.approx(1.0)
    assert scale.of(0.75) == pytest.approx(0.5)
    assert scale.of(0.95) == 1.0 and scale.of(0.2) == 0.0
    # below the floor it goes negative unclipped: such an episode does not vote
    assert scale.unclipped(0.45) == pytest.approx(-0.5)


def test_e5_is_measured_by_its_recorded_name_and_puts_unrelated_text_below_min_relevance() -> None:
    """e5 puts a text unrelated to a question at a cosine of about 0.7 (bench/relevance.py:
    a LoCoMo question's 300th turn at 0.749), which raw would pass minRelevance (0.3)."""
    scale = scale_of(E5SmallEmbedder.name)
    assert scale is SCALES["e5-small-v2-onnx-int8"]
    assert scale.of(0.70) < 0.3 < scale.of(0.82)
    assert all(s.floor < s.ceiling for s in SCALES.values())
