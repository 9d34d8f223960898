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

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from graphmem.enrich.embed import (
    BATCH_TOKENS,
    Vectors,
    embed_by_length,
    mean_pool_normalise,
    onnx_session,
    run_encoder,
    truncating_tokenizer,
)
from graphmem.enrich.jarmodels import E5_DOCUMENT_PREFIX, E5_QUERY_PREFIX, JAR_MODELS


class E5SmallEmbedder:
    name = "e5-small-v2-onnx-int8"
    dimension = 384
    max_tokens = 512  # the model's trained sequence length
    batch_size = 1  # dynamic quantisation: see the module's docstring
    batch_tokens = BATCH_TOKENS
    query_prefix = E5_QUERY_PREFIX
    document_prefix = E5_DOCUMENT_PREFIX
    sentence_vectors = False

    def __init__(self, models_dir: Path, threads: int = 2, *, arena: bool = True) -> None:
        onnx, tokenizer = JAR_MODELS["e5-small-int8"].files(models_dir)
        self._session, self._run_options = onnx_session(onnx, threads, arena=arena)
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
            mean_pool_normalise,
        )

    def _hidden(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        return run_encoder(self._session, self._input_names, self._run_options, ids, mask)
