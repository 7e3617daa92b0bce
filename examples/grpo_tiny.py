"""A few steps of TRL's real ``GRPOTrainer`` on CPU, rewarded by kcgym. Proves the plumbing, not learning.

No downloads: the policy is a tiny randomly initialised Llama-style causal LM with a byte-level
tokenizer built here. A random policy never writes a fenced kernel, so every reward would be 0
and GRPO's group-relative advantages (and gradients) would vanish; the script therefore first
warm-starts the policy with a few supervised steps on two answers to the task prompt: the
template compiler's kernel (correct, reward 1.0) and the same kernel without its last store
(assembles, wrong output, reward 0). Sampling then mixes both, every group has reward variance,
and GRPO has something to reinforce. The prompt is one line (a byte-level toy cannot read
the ~2.5k-character task prompt that ``build_dataset`` makes); the rows keep their
``env_id``/``config``/``seed`` columns, which is all the reward needs.

    python examples/grpo_tiny.py --env-id KernelCraft-NPU-relu --steps 4

Prints one JSON line: the kcgym rewards of each step's completions and how far the parameters moved.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import torch  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402

from kcgym.integrations.trl import KernelReward, build_dataset  # noqa: E402
from kcgym.scoring import scorer_for  # noqa: E402

SPECIAL = ["<|pad|>", "<|end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def byte_tokenizer(corpus: list[str], vocab_size: int = 1024) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained here on ``corpus`` (no download): any text encodes, and
    kernel text takes ~4x fewer tokens than raw bytes, so the toy policy learns and samples faster."""
    from tokenizers import trainers

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    core.train_from_iterator(corpus, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<|pad|>", eos_token="<|end|>", chat_template=CHAT_TEMPLATE
    )


def tiny_model(tokenizer: PreTrainedTokenizerFast, seed: int) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)


def compact(source: str) -> str:
    """The kernel without comments and blank lines: a shorter answer for a byte-level policy."""
    lines = [re.split(r"[;#]", line, maxsplit=1)[0].strip() for line in source.splitlines()]
    return "\n".join(line for line in lines if line)


def warm_start_answers(env_id: str, config: int) -> list[str]:
    """A correct answer (the compiler's kernel) and a wrong one (its last store removed)."""
    env = scorer_for(env_id, config).env
    kernel = compact(env.accelerator.compile(env.task, env.cfg, env.hw))
    lines = kernel.splitlines()
    stores = [i for i, line in enumerate(lines) if "STORE" in line.upper() or "_WO" in line.upper()]
    if not stores:
        raise SystemExit(f"no store instruction to remove in the {env_id} compiler kernel")
    wrong = "\n".join(line for i, line in enumerate(lines) if i != stores[-1])
    return [f"```asm\n{kernel}\n```", f"```asm\n{wrong}\n```"]


def warm_start(model, tokenizer, prompt: list[dict[str, Any]], answers: list[str], steps: int, lr: float) -> None:
    """Supervised steps on ``prompt -> answer`` (loss on the answer only)."""
    prefix = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    batch = [tokenizer(prefix + a + tokenizer.eos_token, add_special_tokens=False)["input_ids"] for a in answers]
    n_prefix = len(tokenizer(prefix, add_special_tokens=False)["input_ids"])
    width = max(len(ids) for ids in batch)
    input_ids = torch.full((len(batch), width), tokenizer.pad_token_id)
    labels = torch.full((len(batch), width), -100)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, ids in enumerate(batch):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        labels[row, n_prefix : len(ids)] = torch.tensor(ids[n_prefix:])
        mask[row, : len(ids)] = 1
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()


def run(
    env_id: str = "KernelCraft-NPU-relu",
    config: int = 1,
    steps: int = 3,
    warm_steps: int = 250,
    group: int = 4,
    seed: int = 0,
    output_dir: str | None = None,
) -> dict[str, Any]:
    """Warm-start, then ``steps`` GRPO steps; returns the kcgym rewards seen and the parameter change."""
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(1)  # a tiny model: more threads only contend (10x slower on a shared 2-core box)
    dataset = build_dataset([(env_id, config)], repeats=group * steps, docs_in_prompt=False)
    # A toy policy cannot use the ~2.5k-character task prompt: it gets one line instead (same columns)
    brief = [{"role": "user", "content": f"Write the kernel for {env_id} C{config}."}]
    dataset = dataset.map(lambda row: {"prompt": brief})
    answers = warm_start_answers(env_id, config)
    docs = [d.text for d in scorer_for(env_id, config).env.docs]
    tokenizer = byte_tokenizer([*answers, brief[0]["content"], *docs])
    model = tiny_model(tokenizer, seed)
    warm_start(model, tokenizer, dataset[0]["prompt"], answers, warm_steps, lr=3e-3)
    completion_tokens = max(len(tokenizer(a)["input_ids"]) for a in answers) + 8
    before = [p.detach().clone() for p in model.parameters()]
    reward = KernelReward()
    with tempfile.TemporaryDirectory() as tmp:
        args = GRPOConfig(
            output_dir=output_dir or tmp,
            use_cpu=True,
            bf16=False,
            max_steps=steps,
            per_device_train_batch_size=group,
            num_generations=group,
            max_completion_length=completion_tokens,
            temperature=1.0,
            learning_rate=1e-3,
            logging_steps=1,
            save_strategy="no",
            report_to=[],
            seed=seed,
            dataloader_num_workers=0,
            disable_tqdm=True,
        )
        trainer = GRPOTrainer(
            model=model, reward_funcs=reward, args=args, train_dataset=dataset, processing_class=tokenizer
        )
        trainer.train()
    moved = sum(float((p.detach() - b).abs().sum()) for p, b in zip(model.parameters(), before, strict=True))
    return {
        "env_id": env_id,
        "config": config,
        "rewards": [[r.reward for r in call] for call in reward.history],
        "correct": [[r.correct for r in call] for call in reward.history],
        "parameter_l1_change": moved,
        "log": [{k: v for k, v in e.items() if isinstance(v, int | float)} for e in trainer.state.log_history],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-id", default="KernelCraft-NPU-relu")
    parser.add_argument("--config", type=int, default=1)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--warm-steps", type=int, default=250)
    parser.add_argument("--group", type=int, default=4, help="completions per prompt (GRPO group size)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    result = run(args.env_id, args.config, args.steps, args.warm_steps, args.group, args.seed)
    print(json.dumps({k: v for k, v in result.items() if k != "log"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
