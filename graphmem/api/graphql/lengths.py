"""How long each text argument may be, checked at the edge for every operation.

Limits go by argument or input-field name, wherever the name appears (an argument, a
field of an input object, a variable feeding either), so one table covers every
operation. A name not listed gets the default (the memory content limit). The request
body limit bounds the total; these keep any one stored text to a sensible size.
"""

from __future__ import annotations

from typing import Any

from graphql import (
    ArgumentNode,
    DocumentNode,
    IntValueNode,
    ListValueNode,
    Node,
    ObjectFieldNode,
    ObjectValueNode,
    StringValueNode,
    ValueNode,
    VariableNode,
)

from graphmem import jsonscan

#: characters; names are the GraphQL argument and input-field names
FIELD_LIMITS: dict[str, int] = {
    # short names and labels
    "sessionId": 128,
    "userId": 128,
    "agentId": 128,
    "taskId": 128,
    "itemId": 128,
    "importId": 200,
    "owner": 128,
    "fromOwner": 128,
    "toOwner": 128,
    "name": 128,
    "schema": 128,
    "alias": 200,
    "canonical": 200,
    "surface": 200,
    "key": 200,
    "status": 64,
    "role": 2_000,  # a persona's role; a message's role is one word, checked later
    "tone": 500,
    "expertise": 500,
    "constraints": 500,
    "signature": 500,
    "structure": 500,
    "validValues": 500,
    "kind": 64,
    # sentences
    "description": 2_000,
    "reason": 1_000,
    "trait": 2_000,
    "lessons": 2_000,
    "outcome": 4_000,
    "action": 4_000,
    "query": 2_000,
    "text": 2_000,
    # documents
    "result": 20_000,
    # a LangGraph store item's value, as JSON text: any size the request body allows
    "valueJson": 1_000_000,
}


#: JSON scalars: their inner keys are the client's own names, not arguments
JSON_FIELDS = frozenset(
    {
        "metadata",
        "data",
        "schema",
        "where",
        "filter",
        "value",
        "metrics",
        "mappings",
        "structure",
    }
)


def too_long(
    document: DocumentNode, variables: dict[str, Any] | None, default: int
) -> tuple[str, int] | None:
    """(name, limit) of the first text over its limit, or None."""
    variables = variables or {}
    stack: list[Any] = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, ArgumentNode | ObjectFieldNode):
            name = node.name.value
            found = _value_too_long(node.value, name, variables, default)
            if found is not None:
                return found
            stack.append(node.value)  # an object literal's fields have their own names
        elif isinstance(node, StringValueNode) and len(node.value) > default:
            return "a default value", default  # of a variable: outside any argument
        elif isinstance(node, Node):
            stack.extend(getattr(node, key, None) for key in node.keys)
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return None


def _value_too_long(
    value: ValueNode, name: str, variables: dict[str, Any], default: int
) -> tuple[str, int] | None:
    limit = FIELD_LIMITS.get(name, default)
    if isinstance(value, StringValueNode):
        return (name, limit) if len(value.value) > limit else None
    if isinstance(value, ListValueNode):
        for item in value.values:
            if (found := _value_too_long(item, name, variables, default)) is not None:
                return found
    if isinstance(value, ObjectValueNode):
        return None  # its fields are ObjectFieldNodes, visited with their own names
    # (inline JSON-scalar objects are ObjectValueNodes too: their keys get the limit of
    # the same name, which errs towards refusing; variables carry JSON in practice)
    if isinstance(value, VariableNode):
        return _json_too_long(variables.get(value.name.value), name, default)
    return None


def _json_too_long(value: Any, name: str, default: int) -> tuple[str, int] | None:
    if isinstance(value, dict) and name in JSON_FIELDS:
        # A JSON scalar's every key and string has the default limit: when no string in
        # its text is that long, none of them is (read at C speed, not walked).
        text = jsonscan.dumped(value)
        if text is not None and jsonscan.longest_string(text) <= default:
            return None
    # (value, the argument or field it belongs to, whether inside a JSON scalar)
    stack: list[tuple[Any, str, bool]] = [(value, name, False)]
    while stack:
        node, field, raw = stack.pop()
        if isinstance(node, str):
            limit = default if raw else FIELD_LIMITS.get(field, default)
            if len(node) > limit:
                return field, limit
        elif isinstance(node, list):
            stack.extend((item, field, raw) for item in node)
        elif isinstance(node, dict):
            raw = raw or field in JSON_FIELDS
            for key, inner in node.items():
                if isinstance(key, str) and len(key) > default:
                    return field, default
                stack.append((inner, field if raw else str(key), raw))
    return None


#: digits an integer literal may have: far more than a 64-bit integer (all graphmem
#: holds), far fewer than Python converts (4,300), whose refusal names Python internals
MAX_INT_DIGITS = 100


def long_integer(document: DocumentNode) -> str | None:
    """The argument or input field (or "a default value") of the first integer literal
    longer than ``MAX_INT_DIGITS``, or None. Checked before validation, which converts
    every literal."""
    stack: list[tuple[Any, str]] = [(document, "a default value")]
    while stack:
        node, name = stack.pop()
        if isinstance(node, IntValueNode):
            if len(node.value.lstrip("-")) > MAX_INT_DIGITS:
                return name
        elif isinstance(node, ArgumentNode | ObjectFieldNode):
            stack.append((node.value, node.name.value))
        elif isinstance(node, Node):
            stack.extend((getattr(node, key, None), name) for key in node.keys)
        elif isinstance(node, list | tuple):
            stack.extend((inner, name) for inner in node)
    return None
