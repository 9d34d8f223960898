"""Namespaces as graph paths, and the fulltext tokens of their prefixes.

A namespace's labels, joined by '.' with a trailing '.', are the item's ``path``
(LangGraph labels cannot contain a period): ``("users", "ada")`` is ``users.ada.``, and
every item under the prefix ``("users",)`` has a path starting with ``users.``, an
index-backed STARTS WITH. Each item also carries one fulltext token per prefix of its
namespace, so Lucene ranks a query search inside the prefix asked for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from graphmem.errors import BadInput

MAX_LABELS = 32
MAX_LABEL = 256
MAX_PATH = 2_048
MAX_KEY = 200  # the API's limit on any `key` argument


def _text(value: str, what: str, limit: int) -> str:
    if len(value) > limit:
        raise BadInput(f"{what}: at most {limit} characters", field=what)
    if "\x00" in value:
        raise BadInput(f"{what}: holds a NUL character", field=what)
    return value


def check_labels(labels: Sequence[str], what: str, *, empty: bool) -> tuple[str, ...]:
    """The labels as a tuple, or BAD_INPUT: too many, empty, too long, or holding a
    period or a NUL (LangGraph refuses those too)."""
    if not empty and not labels:
        raise BadInput(f"{what}: a namespace has at least one label", field=what)
    if len(labels) > MAX_LABELS:
        raise BadInput(f"{what}: at most {MAX_LABELS} labels", field=what)
    for label in labels:
        _text(label, what, MAX_LABEL)
        if not label or "." in label:
            raise BadInput(f"{what}: a label is not empty and holds no period", field=what)
    return tuple(labels)


def check_key(key: str) -> str:
    return _text(key, "key", MAX_KEY)


def path_of(labels: Sequence[str]) -> str:
    """The path of a namespace, or the prefix every path under it starts with."""
    path = "".join(f"{label}." for label in labels)
    if len(path) > MAX_PATH:
        raise BadInput(f"namespace: at most {MAX_PATH} characters joined", field="namespace")
    return path


def labels_of(path: str) -> tuple[str, ...]:
    return tuple(path.split(".")[:-1])


def prefix_token(tenant: str, prefix: str) -> str:
    """The fulltext token standing for a namespace prefix (its path) of the tenant."""
    return "ip" + hashlib.sha1(f"{tenant}\x1f{prefix}".encode()).hexdigest()[:20]


def scope_of(tenant: str, labels: Sequence[str]) -> str:
    """The tokens an item carries: one per non-empty prefix of its namespace."""
    return " ".join(prefix_token(tenant, path_of(labels[:n])) for n in range(1, len(labels) + 1))
