"""Helpers the tests share: in-memory stores, the contracts every store meets, builders."""
