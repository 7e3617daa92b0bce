"""A one-line progress display with live success counts (no dependency, safe without a TTY)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from kcgym.eval.records import EpisodeRecord


class Progress:
    """Redraws one line on a terminal; prints one line per episode otherwise (logs, CI)."""

    def __init__(self, total: int, done_before: int = 0, stream: TextIO | None = None, enabled: bool = True):
        self.total = total
        self.done = done_before
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.success = self.failed = self.excluded = 0
        self.start = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._new = 0

    def update(self, record: EpisodeRecord) -> None:
        self.done += 1
        self._new += 1
        if record.status == "excluded":
            self.excluded += 1
        elif record.success:
            self.success += 1
        else:
            self.failed += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        eta = elapsed / self._new * (self.total - self.done)
        if record.status == "excluded":
            outcome = f"excluded ({record.excluded_reason})"
        elif record.success:
            outcome = f"ok {record.speedup:.2f}x" if record.speedup else "ok"
        else:
            outcome = f"FAIL {record.error_class}"
        line = (
            f"[{self.done}/{self.total}] success {self.success}  failed {self.failed}  excluded {self.excluded}"
            f"  | {record.label} {record.env_id} C{record.config} run {record.run}: {outcome}  | ETA {eta:.0f}s"
        )
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()
