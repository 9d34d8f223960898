"""intfloat's e5-small-v2 (384 dimensions, 12 layers) on onnxruntime, from the int8 model
and tokenizer that a langchain4j jar carries (``jarmodels.py``; installed by
``graphmem services install``).

From its model card: the vector is the mean over the real tokens, then L2-normalised;
it reads up to 512 tokens; and it was trained on pairs of "query: ..." and
"passage: ...", so a search query gets ``E5_QUERY_PREFIX`` and a stored text
``E5_DOCUMENT_PREFIX`` (without the passage prefix its whole-turn recall on the LoCoMo
dev split falls from 0.682 to 0.656, BENCHMARKS.md).

A memory is embedded whole, not sentence by sentence: e5 ranks whole LoCoMo turns
better than their sentences (vector-only R@10 0.682 against 0.618), at a third of the
runs. Like bge-small's int8 export it quantises activations per run with one scale for
the batch, so it embeds one text a run (a vector never depends on its batch-mates).
"""

from __future__ import annotations

from pathlib import Path

from graphmem.enrich.embed import OnnxEmbedder, Optimization
from graphmem.enrich.jarmodels import E5_DOCUMENT_PREFIX, E5_QUERY_PREFIX, JAR_MODELS


class E5SmallEmbedder(OnnxEmbedder):
    name = "e5-small-v2-onnx-int8"
    dimension = 384
    max_tokens = 512  # the model's trained sequence length
    optimization = "extended"  # a quarter more turns/s than "basic" here (embed.py)
    batch_size = 1  # dynamic quantisation: see the module's docstring
    query_prefix = E5_QUERY_PREFIX
    document_prefix = E5_DOCUMENT_PREFIX
    sentence_vectors = False

    def __init__(
        self,
        models_dir: Path,
        threads: int = 2,
        *,
        arena: bool = True,
        optimization: Optimization | None = None,
    ) -> None:
        onnx, tokenizer = JAR_MODELS["e5-small-int8"].files(models_dir)
        self._load(onnx, threads, tokenizer, arena=arena, optimization=optimization)
