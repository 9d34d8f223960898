"""BAAI's bge-small-en-v1.5 (384 dimensions, 12 layers) on onnxruntime, from the model
and tokenizer that a langchain4j jar carries (``jarmodels.py``; installed by
``graphmem services install``).

It differs from MiniLM in three ways, each from its model card: the vector is the
[CLS] token's final state (not the mean over tokens), then L2-normalised; it reads up to
512 tokens; and a search query (not a document) gets ``BGE_QUERY_PREFIX`` before it,
which the embedder's ``query_prefix`` tells the callers that embed queries.

The int8 export quantises activations as it runs (48 DynamicQuantizeLinear nodes feeding
integer MatMuls), with one scale for the whole batch: a text's vector would depend on the
texts batched with it (cosine down to 0.991 against the text alone on LoCoMo turns), so
one tenant's memory could move another's vector (median cosine 0.996). It runs one text
at a time, for about 8% more CPU than batches of 32 (one thread, 400 LoCoMo turns:
38-44 turns per CPU second against 43-46; MiniLM int8 in batches 54-59); the fp32
export batches.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from graphmem.enrich.embed import OnnxEmbedder, Optimization, Vectors
from graphmem.enrich.jarmodels import BGE_QUERY_PREFIX, JAR_MODELS
from graphmem.errors import ConfigurationError


def cls_normalise(hidden: Vectors, mask: npt.NDArray[np.int64]) -> Vectors:
    """The first ([CLS]) token's state of each text, L2 = 1."""
    first = hidden[:, 0, :]
    norms = np.linalg.norm(first, axis=1, keepdims=True)
    vectors: Vectors = (first / np.clip(norms, 1e-12, None)).astype(np.float32)
    return vectors


class BgeSmallEmbedder(OnnxEmbedder):
    dimension = 384
    max_tokens = 512  # the model's trained sequence length
    optimization = "extended"  # a quarter more turns/s than "basic" here (embed.py)
    batch_size = 32
    query_prefix = BGE_QUERY_PREFIX
    document_prefix = ""
    sentence_vectors = True

    def __init__(
        self,
        models_dir: Path,
        variant: str = "bge-small-int8",
        threads: int = 2,
        *,
        arena: bool = True,
        batch_size: int | None = None,
        optimization: Optimization | None = None,
    ) -> None:
        model = JAR_MODELS.get(variant)
        if model is None or not variant.startswith("bge-small-"):
            raise ConfigurationError(f"unknown bge-small variant {variant!r}")
        onnx, tokenizer = model.files(models_dir)
        self.name = f"bge-small-en-v1.5-onnx-{variant.removeprefix('bge-small-')}"
        if variant == "bge-small-int8":
            self.batch_size = 1  # dynamic quantisation: see the module's docstring
        if batch_size is not None:
            self.batch_size = batch_size
        self._load(onnx, threads, tokenizer, arena=arena, optimization=optimization)

    def _pool(self, hidden: Vectors, mask: npt.NDArray[np.int64]) -> Vectors:
        return cls_normalise(hidden, mask)
