"""The models that come as Maven jars, as `graphmem services install` unpacked them (the
setup ran it before these tests): each file is the pinned jar's, and a second install
fetches nothing."""

from __future__ import annotations

import pytest

from graphmem.enrich.jarmodels import JAR_MODELS
from graphmem.ops.devstack.models import install
from graphmem.settings import load_settings


@pytest.mark.parametrize(
    ("name", "onnx_bytes", "tokenizer_bytes"),
    [("bge-small-int8", 34_014_426, 711_396), ("e5-small-int8", 34_014_367, 711_396)],
)
def test_the_installed_jar_is_the_pinned_one(
    name: str, onnx_bytes: int, tokenizer_bytes: int
) -> None:
    models = load_settings().models_dir
    model = JAR_MODELS[name]
    onnx, tokenizer = model.files(models)
    assert onnx.stat().st_size == onnx_bytes and tokenizer.stat().st_size == tokenizer_bytes
    assert install(model, models) == onnx.parent  # already there: nothing fetched
