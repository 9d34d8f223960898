"""Working memory: a task's scratch pad, in process, cleared on completion
(docs/concepts.md#memory-types).

Per process by design (sub-millisecond, no persistence): with several API replicas, a
task's working memory lives on the replica that wrote it.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import BadInput


class WorkingMemory:
    max_bytes = 64 * 1024  # per task: scratch data, not a document store

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], dict[str, Any]] = {}

    def set(self, tenant: str, task_id: str, key: str, value: Any) -> dict[str, Any]:
        if not key:
            raise BadInput("key: must not be empty", field="key")
        data = dict(self._data.get((tenant, task_id), {}))
        data[key] = value
        if len(json.dumps(data, default=str)) > self.max_bytes:
            raise BadInput(f"working memory of a task holds at most {self.max_bytes} bytes")
        self._data[(tenant, task_id)] = data
        return dict(data)

    def get(self, tenant: str, task_id: str) -> dict[str, Any]:
        return dict(self._data.get((tenant, task_id), {}))

    def clear(self, tenant: str, task_id: str) -> None:
        self._data.pop((tenant, task_id), None)
