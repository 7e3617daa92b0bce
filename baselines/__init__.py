"""Policies that play kcgym envs: the OpenAI-compatible LLM agent, compiler, expert, random, search.

They live outside the ``kcgym`` package because they are users of the env contract, not
part of it: anything here could be written by a third party against the public API.
"""
