"""`from graphmem import X` works for every name the package exports (they are loaded on
first use, by module path strings that a move of the module would otherwise leave behind)."""

from __future__ import annotations

import importlib

import pytest

import graphmem


@pytest.mark.parametrize("name", graphmem.__all__)
def test_every_exported_name_loads(name: str) -> None:
    value = getattr(importlib.import_module("graphmem"), name)
    assert getattr(value, "__name__", name) == name
