"""The run directory: ``episodes.jsonl`` (one record per line) and transcripts beside it.

Each record is appended with a single ``write`` on an ``O_APPEND`` descriptor and fsynced,
under a lock, so concurrent workers never interleave lines and a kill leaves at most one
torn last line, which loading skips (that episode is simply run again on ``--resume``).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from kcgym.eval.records import EpisodeKey, EpisodeRecord

EPISODES = "episodes.jsonl"
TRANSCRIPTS = "transcripts"


class RunStore:
    """Append-only episode records of one run directory."""

    def __init__(self, run_dir: str | os.PathLike[str]):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / EPISODES
        self._lock = threading.Lock()

    def create(self) -> None:
        (self.run_dir / TRANSCRIPTS).mkdir(parents=True, exist_ok=True)
        self.path.touch(exist_ok=True)
        self._repair_torn_tail()

    def _repair_torn_tail(self) -> None:
        """Terminate a torn last line (a killed writer) so the next record starts on its own line."""
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.path, "ab") as f:
                f.write(b"\n")

    def append(self, record: EpisodeRecord) -> None:
        line = (record.model_dump_json() + "\n").encode()
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def write_transcript(self, key: EpisodeKey, transcript: dict[str, Any]) -> str:
        """Write atomically (temp file + rename); returns the path relative to the run dir."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key.text.replace("|", "__"))
        rel = f"{TRANSCRIPTS}/{safe}.json"
        target = self.run_dir / rel
        tmp = target.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(json.dumps(transcript, indent=1), encoding="utf-8")
        os.replace(tmp, target)
        return rel

    def records(self) -> list[EpisodeRecord]:
        return load_records(self.path)

    def finished(self) -> set[EpisodeKey]:
        return {r.key for r in self.records()}


def load_records(path: str | os.PathLike[str]) -> list[EpisodeRecord]:
    """Every complete record of an ``episodes.jsonl``; torn or foreign lines are skipped.

    A later record with the same key replaces an earlier one, so a file is never counted twice.
    """
    by_key: dict[EpisodeKey, EpisodeRecord] = {}
    p = Path(path)
    if not p.exists():
        return []
    with open(p, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                record = EpisodeRecord.model_validate_json(line)
            except ValidationError:
                continue
            by_key[record.key] = record
    return list(by_key.values())
