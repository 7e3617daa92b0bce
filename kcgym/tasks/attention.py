"""The attention tasks (paper tasks 16-20): the attention core and the projected multi-head forms.

SDPA and FlashAttention compute the same function; FlashAttention names the algorithm the
agent is expected to use (tiles of keys with an online softmax, no s x s score matrix in
memory), and both are scored against the same reference. MHA, GQA and MQA add the Q/K/V and
output projections and differ only in how many K/V heads the query heads share.

Attention is bidirectional (no causal mask), as the paper's Table 4 defines it.
"""

from __future__ import annotations

import math

import numpy as np

from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import unit_activations
from kcgym.tasks.stress import MLP_OUTLIER_GAIN, large_logits_via, outliers_in

STAGES = ("S = bf16(bf16(Q @ K^T) * scale) (the matrix unit writes Q @ K^T out, a vector op scales it), "
          "P = bf16(softmax(S)) (exact, rounded once), O = bf16(P @ V) (fp32 accumulation)")


class _AttentionCore(Task):
    formula = "O = softmax(Q @ K^T / sqrt(h)) @ V"
    stress_sets = (large_logits_via("Q"),)

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"scale": 1.0 / math.sqrt(cfg["h"])}

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        s, h = cfg["s"], cfg["h"]
        return {"Q": cm.query_activations(rng, (s, h)), "K": unit_activations(rng, (s, h)),
                "V": unit_activations(rng, (s, h))}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"O": cm.attention(inputs["Q"], inputs["K"], inputs["V"], self.constants(cfg)["scale"])}

    def macs(self, cfg: TaskConfig) -> int:
        return 2 * cfg["s"] * cfg["s"] * cfg["h"]


class SDPA(_AttentionCore):
    description = (
        "Scaled dot-product attention of one head (batch 1, head dim h, no mask): Q, K, V and O of "
        "shape (s, h), row-major; scale = 1/sqrt(h) is given as a constant. Stages round as the NPU "
        f"writes them: {STAGES}. Queries have std 2.5 and keys unit std, so the logits have std ~2.5 "
        "and the output is O(1)."
    )


class FlashAttention(_AttentionCore):
    description = (
        "The same function as ScaledDotProduct (one head, batch 1, no mask, scale = 1/sqrt(h) given), "
        "meant to be computed FlashAttention-style: blocks of keys with an online softmax (running max "
        f"and sum), never writing the s x s scores to HBM. Checked against the staged reference: {STAGES}."
    )


class _ProjectedAttention(Task):
    """Multi-head self-attention with projections; ``kv_heads`` fixes the K/V head count."""

    # Not large logits: here Q and K are rounded products, so one upstream ulp moves a bf16 logit of
    # magnitude 64-128 by 0.5 and a weight by e^0.5. Measured on the NPU compiler kernel (gqa C2, the
    # stress seed of the tests): Wq x2 already gives margin 1.20, x4 2.99, x16 6.66; mild outliers 0.86.
    stress_sets = (outliers_in("X", gain=MLP_OUTLIER_GAIN),)

    def kv_heads(self, cfg: TaskConfig) -> int:
        return cfg["nh"]

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"scale": 1.0 / math.sqrt(cfg["h"] // cfg["nh"])}

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        s, h, nh = cfg["s"], cfg["h"], cfg["nh"]
        return {"X": unit_activations(rng, (s, h)), **cm.attention_weights(rng, h, nh, self.kv_heads(cfg))}

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        x = inputs["X"]
        return {"Y": cm.projected_attention(x, x, inputs, cfg["nh"], self.kv_heads(cfg))}

    def macs(self, cfg: TaskConfig) -> int:
        s, h, nh = cfg["s"], cfg["h"], cfg["nh"]
        kv = self.kv_heads(cfg) * (h // nh)
        return 2 * s * h * h + 2 * s * h * kv + 2 * s * s * h


_PROJ_STAGES = ("Q = bf16(X @ Wq), K = bf16(X @ Wk), V = bf16(X @ Wv); per head i (columns i*d .. i*d+d-1) "
                "S = bf16(bf16(Q_i @ K_g^T) * scale), P = bf16(softmax(S)) (exact, rounded once), "
                "O_i = bf16(P @ V_g); Y = bf16(O @ Wo), O the heads side by side")


class MHA(_ProjectedAttention):
    formula = "Y = concat_i(softmax(Q_i K_i^T / sqrt(d)) V_i) @ Wo, Q = X Wq, K = X Wk, V = X Wv"
    description = (
        "Multi-head self-attention (batch 1, no mask) of X (s, h) with nh heads of d = h / nh; all "
        "weights (h, h), input-major; scale = 1/sqrt(d) given. Stages round as the NPU writes them: "
        f"{_PROJ_STAGES} (g = i). Wq has gain 2.5, so the logits have std ~2.5."
    )


class GQA(_ProjectedAttention):
    formula = "as MHA, with nkv K/V heads: query head i attends with K/V head i // (nh / nkv)"
    description = (
        "Grouped-query self-attention (batch 1, no mask) of X (s, h): nh query heads of d = h / nh share "
        "nkv K/V heads, query head i using K/V head g = i // (nh / nkv). Wq, Wo are (h, h), Wk, Wv "
        f"(h, nkv * d), input-major; scale = 1/sqrt(d) given. Stages: {_PROJ_STAGES}."
    )

    def kv_heads(self, cfg: TaskConfig) -> int:
        return cfg["nkv"]


class MQA(_ProjectedAttention):
    formula = "as MHA, with one K/V head shared by all query heads"
    description = (
        "Multi-query self-attention (batch 1, no mask) of X (s, h): nh query heads of d = h / nh share "
        "one K/V head. Wq, Wo are (h, h), Wk, Wv (h, d), input-major; scale = 1/sqrt(d) given. "
        f"Stages: {_PROJ_STAGES} (g = 0)."
    )

    def kv_heads(self, cfg: TaskConfig) -> int:
        return 1
