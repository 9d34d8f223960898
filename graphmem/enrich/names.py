"""The embedding models' names, as `GRAPHMEM_EMBEDDER` takes them: apart from the models
themselves (``embedders.py`` builds one), so that the settings can check a name without
loading onnxruntime."""

from __future__ import annotations

from typing import Literal, get_args

EmbedderName = Literal[
    "minilm-int8",
    "minilm-int8-float",
    "minilm-fp32",
    "bge-small-int8",
    "bge-small-fp32",
    "e5-small-int8",
]

EMBEDDERS: tuple[str, ...] = get_args(EmbedderName)
