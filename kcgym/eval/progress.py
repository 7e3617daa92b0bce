"""A one-line progress display with live success counts (no dependency, safe without a TTY).

Writes go to stderr and never take the run down: a closed pipe (``kcgym eval 2>&1 | head -2``)
silences the display and the run goes on, so every episode in flight is still recorded.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from kcgym.eval.records import EpisodeRecord, point_text

_REASON_CHARS = 80  # of a failure's message on the progress line (the first of a kind is noted in full)


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``: an ETA a person reads at a glance."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def plural(n: int, word: str) -> str:
    """``1 episode``, ``2 episodes``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


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
        self.broken = False  # the stream was closed under us: stay silent from then on
        self._new = 0
        self._line_open = False

    def _write(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # EPIPE, or a closed file
            self.broken = True

    def note(self, text: str, always: bool = False) -> None:
        """A message on its own line (kept above the redrawn progress line); ``always``: even with --quiet."""
        if not (self.enabled or always):
            return
        prefix = "\r\x1b[2K" if self.tty and self._line_open else ""
        self._line_open = False
        self._write(prefix + text + "\n")

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
            if record.error:
                reason = record.error.strip().splitlines()[0]
                cut = reason[:_REASON_CHARS] + ("..." if len(reason) > _REASON_CHARS else "")
                outcome += f" ({cut})"
        point = f" [{point_text(record.point)}]" if record.hw_overrides else ""
        line = (
            f"[{self.done}/{self.total}] success {self.success}  failed {self.failed}  excluded {self.excluded}"
            f"  | {record.label} {record.env_id} C{record.config}{point} run {record.run}: {outcome}"
            f"  | ETA {format_duration(eta)}"
        )
        if self.tty:
            self._write("\r\x1b[2K" + line)
            self._line_open = True
        else:
            self._write(line + "\n")

    def close(self) -> None:
        if self.enabled and self.tty and self._line_open:
            self._write("\n")
            self._line_open = False
