"""Adapters to RL and evaluation stacks (TRL, verifiers) and trajectory export.

Each adapter module imports its framework lazily or at module import, never from
``kcgym/__init__``, so the core package does not depend on the ``rl`` extra.
"""
