"""Local embedders: the protocol and what every model family shares.
Nothing here downloads weights: models come from installed packages or from the jars
`graphmem services install` unpacks.

The embedder is pluggable (``Embedder`` protocol). ``make_embedder`` builds one by name
(``names.EMBEDDERS``): all-MiniLM-L6-v2 in two builds (``minilm.py``), BAAI's
bge-small-en-v1.5 in two (``bge.py``) or intfloat's e5-small-v2 (``e5.py``). Every one
tokenises with its model's own WordPiece tokenizer, runs its encoder on batches cut by
``embed_by_length``, pools and L2-normalises; the ONNX ones run on onnxruntime sessions
from ``onnx_session``.

Calls are synchronous and CPU-bound: the service runs them in a worker thread, in
batches cut from the texts sorted by token count (little padding).
``bench/embedders.py`` compares them (BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from graphmem.enrich.tokens import new_tokenizer

Vectors = npt.NDArray[np.float32]
#: onnxruntime's graph optimisation levels (``onnx_session``)
Optimization = Literal["disable", "basic", "extended", "all"]

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
    #: for queries); ``embed_queries`` adds it
    query_prefix: str
    #: what a stored text gets before it ("" for most models); ``embed_memories`` adds it
    document_prefix: str
    #: whether a memory of several sentences is embedded sentence by sentence
    #: (``sentences.py``) or whole: which ranks better depends on the model
    sentence_vectors: bool

    def embed(self, texts: Sequence[str]) -> Vectors:
        """L2-normalised vectors, one row per text."""
        ...


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
    path: Path | bytes,
    threads: int,
    *,
    optimization: Optimization = "basic",
    spinning: bool = False,
    arena: bool = True,
) -> tuple[Any, Any]:
    """An onnxruntime session for an embedding model (a file, or a model's bytes) on the
    CPU, and the run options each of its runs takes. Shared by the ONNX embedders; each
    chooses its ``optimization`` (below)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # onnxruntime's intra-op threads spin (busy-wait) between operators by default.
    # The embedder never has the cores to itself: the worker runs spaCy beside it, and
    # the API, Redis and Neo4j share the machine. There a spinning thread burns the
    # core the others need and a descheduled one stalls every operator: on two busy
    # cores the embedder runs faster without spinning, alone on idle cores faster with
    # it (bench/embedders.py measures both), hence the option.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    # Which level is fastest depends on the graph, so each embedder names its own. MiniLM's
    # rewritten int8 graph runs fastest at "basic" (constant folding, redundant nodes
    # removed): the fusions above it cost it about 20% on LoCoMo turns. The jar models'
    # int8 graphs (bge, e5) embed about a quarter more turns a second at "extended", whose
    # fusions (layer norms, GELU, quantised MatMuls) match their nodes (bench/embedders.py;
    # BENCHMARKS.md, "Embedders").
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
        path if isinstance(path, bytes) else str(path),
        sess_options=options,
        providers=["CPUExecutionProvider"],
    )
    return session, run_options


class OnnxEmbedder:
    """What the ONNX embedders share: a session and its model's tokenizer (``_load``), and
    ``embed`` over runs cut by ``embed_by_length``, pooled by ``_pool`` (the mean over
    real tokens unless the model says otherwise)."""

    dimension: int
    max_tokens: int
    batch_size: int
    batch_tokens: int = BATCH_TOKENS
    #: onnxruntime's graph optimisation level for this model (see ``onnx_session``)
    optimization: Optimization = "basic"

    def _load(
        self,
        model: Path | bytes,
        threads: int,
        tokenizer: Path | None = None,
        **session: Any,
    ) -> None:
        if session.get("optimization") is None:
            session["optimization"] = self.optimization
        self._session, self._run_options = onnx_session(model, threads, **session)
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tok = truncating_tokenizer(self.max_tokens, tokenizer)

    def embed(self, texts: Sequence[str]) -> Vectors:
        return embed_by_length(
            texts,
            self.batch_size,
            self.batch_tokens,
            self.dimension,
            self._tok,
            self._hidden,
            self._pool,
        )

    def _hidden(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        return run_encoder(self._session, self._input_names, self._run_options, ids, mask)

    def _pool(self, hidden: Vectors, mask: npt.NDArray[np.int64]) -> Vectors:
        return mean_pool_normalise(hidden, mask)


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


#: what a model run costs beside its tokens, in tokens' worth: about 1.6 ms on one
#: thread, nine tokens of a short batch (MiniLM int8, 2026-11-28)
RUN_TOKENS = 9
#: padded width at which attention's work per token doubles a token's cost (MiniLM
#: int8: 181 us a token 16 wide, 200 at 32, 257 at 128)
ATTENTION_WIDTH = 270


def _batches(lengths: Sequence[int], batch_size: int, batch_tokens: int) -> Iterator[range]:
    """Consecutive runs of ``lengths`` (ascending token counts) of at most
    ``batch_size`` texts whose padded size, texts times the longest, stays within
    ``batch_tokens`` (one text at least, whatever its length), cut where the model's
    estimated work is least: padded tokens (dearer as runs widen) plus a fixed cost per
    run. Cutting greedily (as many texts as fit) padded a call of 20 LoCoMo turns to 1.46
    times its real tokens, where one call of 600 padded 1.03 times: the worker embeds
    in calls of about 20 turns (``workerstages.py``), and each paid 40% more model time
    than it needed."""
    n = len(lengths)
    # best[j]: the least cost of the first j texts; start[j]: where their last run starts
    best = [0.0] + [float("inf")] * n
    start = [0] * (n + 1)
    for j in range(1, n + 1):
        width = lengths[j - 1]
        per_text = width * (1 + width / ATTENTION_WIDTH)
        for i in range(j - 1, max(-1, j - 1 - batch_size), -1):
            if i < j - 1 and (j - i) * width > batch_tokens:
                break
            cost = best[i] + RUN_TOKENS + (j - i) * per_text
            if cost < best[j]:
                best[j], start[j] = cost, i
    runs = []
    j = n
    while j > 0:
        runs.append(range(start[j], j))
        j = start[j]
    yield from reversed(runs)


def mean_pool_normalise(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> Vectors:
    """sentence-transformers' Pooling(mean) + Normalize: the mean over real tokens, L2 = 1."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    vectors: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return vectors


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """Search queries' vectors: each text with the model's query instruction before it."""
    return embedder.embed([embedder.query_prefix + t for t in texts])
