"""Single-turn prompts: the whole task in one message, answered by one fenced kernel.

The multi-turn env's prompt teaches a tool workflow; a GRPO policy instead answers once, so
its prompt says what to return and how it is scored, and leaves the tools out.
"""

from __future__ import annotations

from typing import Any

from kcgym.envs.kernel_env import KernelCraftEnv
from kcgym.envs.prompts import task_section

ANSWER_FORMAT = (
    "Answer with the COMPLETE kernel in a single fenced code block (```asm ... ```). Only the last "
    "fenced block of your answer is assembled; an answer without one scores 0."
)


def system_prompt(env: KernelCraftEnv) -> str:
    return (
        "You are an expert assembly programmer for custom AI accelerators. You write correct and fast "
        f"kernels for the {env.accelerator.name} accelerator in its own assembly language. {ANSWER_FORMAT}"
    )


def user_prompt(env: KernelCraftEnv, *, docs_in_prompt: bool = True) -> str:
    """Machine, task, layout, scoring and (by default) the ISA docs of one (env id, config)."""
    acc = env.accelerator
    parts = [
        f"Write a kernel for the {acc.name} accelerator: {acc.summary.strip()} It is modelled on {acc.modelled_on}.",
        "## Hardware configuration\n\n" + acc.hardware_summary(env.hw).strip(),
        task_section(env.task, env.cfg),
        "## Memory layout\n\n" + acc.layout(env.task, env.cfg, env.hw).describe(),
        "## Scoring\n\nThe kernel runs on fresh hidden inputs of these shapes. " + env.reward_spec.describe(),
    ]
    if docs_in_prompt:
        parts.append(
            "## Documentation\n\n" + "\n\n".join(f"### [{d.id}] {d.title}\n\n{d.text.strip()}" for d in env.docs)
        )
    parts.append(ANSWER_FORMAT)
    return "\n\n".join(parts) + "\n"


def chat_prompt(env: KernelCraftEnv, *, docs_in_prompt: bool = True) -> list[dict[str, Any]]:
    """``[system, user]`` messages: the conversational prompt format of TRL and verifiers."""
    return [
        {"role": "system", "content": system_prompt(env)},
        {"role": "user", "content": user_prompt(env, docs_in_prompt=docs_in_prompt)},
    ]
