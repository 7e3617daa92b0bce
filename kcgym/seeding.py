"""Seeding: the one way kcgym turns a seed into random numbers.

Every random draw (input sets, the hidden-input seed of an episode, the RVV poison fill, the random
and search agents) goes through :func:`generator` or :func:`derive`, which feed numpy's
``SeedSequence`` a list of non-negative words: the seed, then stream ids that keep independent
draws apart (a salt, an input-set index, the config). ``SeedSequence`` hashes the whole list, so
streams never overlap and nearby seeds give unrelated numbers. :func:`signed` maps any integer
(negative ones too) to two such words.

``generator(s)`` is ``np.random.default_rng(s)``, so existing seeds keep their numbers.
"""

from __future__ import annotations

import numpy as np


def signed(seed: int) -> tuple[int, int]:
    """Any integer as two non-negative words ``(|seed|, seed < 0)`` (``SeedSequence`` rejects negatives)."""
    s = int(seed)
    return abs(s), int(s < 0)


def _words(words: tuple[int, ...]) -> list[int]:
    out = [int(w) for w in words]
    if not out or any(w < 0 for w in out):
        raise ValueError(f"seed words must be one or more non-negative integers, got {list(words)}"
                         " (use kcgym.seeding.signed for a seed that may be negative)")
    return out


def generator(*words: int) -> np.random.Generator:
    """The random generator of a seed and its stream ids, e.g. ``generator(seed)`` or ``generator(seed, 3)``."""
    return np.random.default_rng(_words(words))


def derive(*words: int) -> int:
    """A 32-bit seed derived from ``words``, to hand on (an episode's hidden-input seed from its seed)."""
    return int(np.random.SeedSequence(_words(words)).generate_state(1, dtype=np.uint32)[0])


__all__ = ["derive", "generator", "signed"]
