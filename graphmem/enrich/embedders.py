"""The embedders by name, as the settings choose one: the one module that knows every
model, so that no model's module imports another's."""

from __future__ import annotations

from pathlib import Path

from graphmem.enrich.bge import BgeSmallEmbedder
from graphmem.enrich.e5 import E5SmallEmbedder
from graphmem.enrich.embed import Embedder
from graphmem.enrich.minilm import MiniLMFp32Embedder, MiniLMInt8Embedder
from graphmem.enrich.names import EMBEDDERS
from graphmem.errors import ConfigurationError


def make_embedder(
    name: str, threads: int = 2, *, arena: bool = True, models_dir: Path | None = None
) -> Embedder:
    """The embedder ``name`` (``EMBEDDERS``); ``arena``: onnxruntime's memory arena, for
    processes that embed batches all day (the ONNX embedders); ``models_dir``: where
    `graphmem services install` unpacked the models that come as jars."""
    if name == "minilm-int8":
        return MiniLMInt8Embedder(threads=threads, arena=arena)
    if name == "minilm-int8-float":
        return MiniLMInt8Embedder(threads=threads, arena=arena, kernels="float")
    if name == "minilm-fp32":
        return MiniLMFp32Embedder()  # BLAS threads: OPENBLAS_NUM_THREADS
    if name in ("bge-small-int8", "bge-small-fp32"):
        return BgeSmallEmbedder(models_dir or Path(".graphmem/models"), name, threads, arena=arena)
    if name == "e5-small-int8":
        return E5SmallEmbedder(models_dir or Path(".graphmem/models"), threads, arena=arena)
    raise ConfigurationError(f"unknown embedder {name!r}; available: {', '.join(EMBEDDERS)}")
