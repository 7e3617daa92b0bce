"""The bounded, least-recently-used cache of pre-passed programs that every trace-ahead path keeps.

A trace is computed once per program (and config, memory size, step budget) and reused across input
sets and across ``simulate``/``submit``; the cache holds at most ``max_entries`` of them and, beyond the
newest one, at most ``max_bytes`` of their arrays (a C5 composite's schedule is tens of MB). Scoring threads and
an eval's concurrent episodes share one cache, so every operation holds its lock (an eviction walks the entries).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class TraceCache:
    def __init__(self, max_entries: int, max_bytes: int, size: Callable[[Any], int]):
        self.max_entries, self.max_bytes, self.size = max_entries, max_bytes, size
        self.entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            hit = self.entries.get(key)
            if hit is not None:
                self.entries.move_to_end(key)
            return hit

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self.entries[key] = value
            while len(self.entries) > self.max_entries or (
                    len(self.entries) > 1 and sum(map(self.size, self.entries.values())) > self.max_bytes):
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def values(self) -> list[Any]:
        with self._lock:
            return list(self.entries.values())

    def __len__(self) -> int:
        return len(self.entries)
