"""LangGraph namespaces as graphmem scopes.

A namespace is one graphmem session: ``lg.`` and its labels, each encoded, joined by
``.`` (LangGraph labels cannot contain a period, so the join is unambiguous). The encoding
keeps A-Z a-z 0-9 and ``-`` and writes every other byte of the UTF-8 label as ``_XX``
(hex), which keeps session ids within graphmem's id alphabet and lets ``namespace_of``
read a namespace back from its session. A namespace ``("users", <user>, ...)`` also gives
its memories the userId ``<user>`` (encoded the same way), so graphmem's user scope
(search, export, ``forgetUser``) covers everything stored under that user.
"""

from __future__ import annotations

import re

from langgraph.store.base import InvalidNamespaceError

PREFIX = "lg."
_SAFE = re.compile(r"[A-Za-z0-9-]")
_MAX_ID = 128


def encode_label(label: str) -> str:
    return "".join(
        c if _SAFE.fullmatch(c) else "".join(f"_{b:02X}" for b in c.encode("utf-8")) for c in label
    )


def decode_label(text: str) -> str:
    raw = bytearray()
    i = 0
    while i < len(text):
        if text[i] == "_":
            raw.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            raw += text[i].encode("ascii")
            i += 1
    return raw.decode("utf-8")


def session_prefix(prefix: tuple[str, ...]) -> str:
    """The session-id prefix every namespace under ``prefix`` starts with (and some that
    only share its last label's beginning: callers compare the decoded namespaces)."""
    return PREFIX + ".".join(encode_label(label) for label in prefix)


def session_of(namespace: tuple[str, ...]) -> str:
    session = session_prefix(namespace)
    if len(session) > _MAX_ID:
        raise InvalidNamespaceError(
            f"namespace {namespace} is too long for graphmem: its session id would be "
            f"{len(session)} characters (at most {_MAX_ID})"
        )
    return session


def namespace_of(session_id: str) -> tuple[str, ...] | None:
    """The namespace stored in a session, or None for a session that is not the store's."""
    if not session_id.startswith(PREFIX):
        return None
    try:
        return tuple(decode_label(p) for p in session_id.removeprefix(PREFIX).split("."))
    except (ValueError, UnicodeDecodeError):
        return None


def user_of(namespace: tuple[str, ...]) -> str | None:
    if len(namespace) >= 2 and namespace[0] == "users":
        user = encode_label(namespace[1])
        return user if len(user) <= _MAX_ID else None
    return None
