"""A non-LLM optimiser: stochastic local search over the compiler kernel's instruction order.

It knows nothing about any ISA. It moves instruction lines (hoisting a line earlier lets a
long-latency operation such as a memory transfer start sooner and overlap later work) and
deletes lines (redundant instructions), keeps a candidate only if ``simulate`` says it is
correct *and* faster, and submits the best. That the environment rewards this blind search
is evidence that its timing model pays for real scheduling work, without any LLM.

Candidates that do not assemble are filtered locally (free, like a compiler front end), so
the turn budget is spent on simulations only. Search is a baseline, not a contestant: it asks
for a turn budget of its own (``search_budget`` candidates), recorded with every episode.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from baselines.base import Agent
from baselines.session import Session
from kcgym import seeding

_COMMENT_PREFIXES = (";", "#", "//")


def _is_instruction(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith(_COMMENT_PREFIXES) and not text.startswith(".")


def mutate(source: str, rng: np.random.Generator) -> str:
    """One random edit of ``source``: hoist an instruction 1-4 lines up, sink it, or delete it."""
    lines = source.splitlines()
    idx = [i for i, line in enumerate(lines) if _is_instruction(line)]
    if len(idx) < 2:
        return source
    kind = rng.choice(["hoist", "hoist", "sink", "delete"])
    pos = int(rng.integers(0, len(idx)))
    i = idx[pos]
    if kind == "delete":
        del lines[i]
    else:
        step = int(rng.integers(1, 5))
        j_pos = pos - step if kind == "hoist" else pos + step
        j_pos = min(max(j_pos, 0), len(idx) - 1)
        line = lines.pop(i)
        j = idx[j_pos]
        lines.insert(j if j < i else j, line)
    return "\n".join(lines) + "\n"


class SearchAgent(Agent):
    """Hill climbing from the compiler kernel, judged only by the env's ``simulate`` feedback."""

    name: ClassVar[str] = "search"
    _PROPOSALS_PER_CANDIDATE = 50  # mutations tried (assembled locally) to find one new candidate

    def env_kwargs(self) -> dict[str, Any]:
        # write+simulate per candidate, plus the seed kernel, a final rewrite and submit; three visible input
        # sets, so that an edit that is right only by luck on one input set is rejected before submit
        return {"max_turns": 2 * self.options.search_budget + 4, "visible_inputs": 3}

    def play(self, session: Session) -> None:
        session.start()
        env = session.unwrapped
        rng = seeding.generator(session.seed)
        best = env.accelerator.compile(env.task, env.cfg, env.hw)
        best_cycles = self._try(session, best)
        seen = {best}
        current = best
        for _ in range(self.options.search_budget):
            if session.done or session.last_info.get("turns_left", 0) < 4:
                break
            candidate = self._propose(env, best, rng, seen)
            if candidate is None:
                break
            cycles = self._try(session, candidate)
            current = candidate
            if cycles is not None and (best_cycles is None or cycles < best_cycles):
                best, best_cycles = candidate, cycles
        if not session.done and current != best:
            session.call("write_kernel", {"source": best})
        if not session.done:
            session.call("submit", {})

    def _propose(self, env: Any, best: str, rng: np.random.Generator, seen: set[str]) -> str | None:
        for _ in range(self._PROPOSALS_PER_CANDIDATE):
            candidate = best
            for _ in range(int(rng.integers(1, 3))):
                candidate = mutate(candidate, rng)
            if candidate in seen:
                continue
            seen.add(candidate)
            try:
                env.accelerator.assemble(candidate, env.hw)
            except Exception:  # an assembly error: not worth a turn
                continue
            return candidate
        return None

    @staticmethod
    def _try(session: Session, source: str) -> int | None:
        """Cycles of ``source`` if ``simulate`` finds it correct, else None."""
        session.call("write_kernel", {"source": source})
        if session.done:
            return None
        _, info = session.call("simulate", {})
        if info.get("correct") and not info.get("below_roofline") and info.get("cycles"):
            return int(info["cycles"])
        return None
