"""The transformer decoder blocks (paper tasks 22 and 23): LLaMA-style and T5-style, pre-norm.

Both are bidirectional (no causal mask, as the paper's Table 4 defines self-attention) and
use RMSNorm without a learned gain (a gain folds into the next projection's weights). The
LLaMA block has no RoPE: Table 4 lists RMSNorm, self-attention and SwiGLU only.
"""

from __future__ import annotations

import math

import numpy as np

from kcgym.tasks import composite_math as cm
from kcgym.tasks.base import Task, TaskConfig
from kcgym.tasks.families import matmul_bf16, mlp_weights, unit_activations
from kcgym.tasks.stress import MLP_OUTLIER_GAIN, outliers_in

_ATTN = ("attention(Z) = concat_i(softmax(bf16(bf16(Q_i K_i^T) * scale)) V_i) @ Wo with Q = bf16(Z Wq), "
         "K = bf16(C Wk), V = bf16(C Wv) (C = Z for self-attention), every product rounded once to bf16 "
         "and the softmax exact, rounded once")



class _Decoder(Task):
    # mild outliers, as the MLP blocks: the blocks contain one, and with x8..32 the NPU decoder_llama C5
    # compiler kernel missed the tolerance (slow tier)
    stress_sets = (outliers_in("X", gain=MLP_OUTLIER_GAIN),)

    def constants(self, cfg: TaskConfig) -> dict[str, float]:
        return {"eps": cm.NORM_EPS, "inv_hidden": 1.0 / cfg["h"], "scale": 1.0 / math.sqrt(cfg["h"] // cfg["nh"])}


class DecoderLLaMA(_Decoder):
    formula = "H = X + MHA(RMSNorm(X));  Y = H + SwiGLU(RMSNorm(H))"
    description = (
        "Pre-norm LLaMA-style decoder block on X (s, h), batch 1: H = X + attention(RMSNorm(X)), "
        "Y = H + (SiLU(Z W1) * (Z W3)) W2 with Z = RMSNorm(H). nh heads of d = h / nh, no mask, no "
        "RoPE; RMSNorm has no gain. Weights input-major: Wq, Wk, Wv, Wo (h, h), W1, W3 (h, hi), W2 "
        f"(hi, h). Constants eps, inv_hidden = 1/h, scale = 1/sqrt(d). Stages round to bf16: {_ATTN}; "
        "RMSNorm, SiLU exact, rounded once; residual adds and the SiLU * up product rounded."
    )

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        s, h, nh, hi = cfg["s"], cfg["h"], cfg["nh"], cfg["hi"]
        return {
            "X": unit_activations(rng, (s, h)),
            **cm.attention_weights(rng, h, nh, nh, query_gain=cm.DECODER_QUERY_GAIN),
            **mlp_weights(rng, h, hi, gated=True),
        }

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        nh = cfg["nh"]
        z = cm.rmsnorm(inputs["X"])
        hres = cm.add(inputs["X"], cm.projected_attention(z, z, inputs, nh, nh))
        z = cm.rmsnorm(hres)
        a = cm.mul(cm.silu(matmul_bf16(z, inputs["W1"])), matmul_bf16(z, inputs["W3"]))
        return {"Y": cm.add(hres, matmul_bf16(a, inputs["W2"]))}

    def macs(self, cfg: TaskConfig) -> int:
        s, h, hi = cfg["s"], cfg["h"], cfg["hi"]
        return 4 * s * h * h + 2 * s * s * h + 3 * s * h * hi


class DecoderT5(_Decoder):
    formula = "H1 = X + SelfAttn(RMSNorm(X));  H2 = H1 + CrossAttn(RMSNorm(H1), E);  Y = H2 + FFN(RMSNorm(H2))"
    description = (
        "Pre-norm T5-style decoder block on X (s, h) with encoder states E (s, h), batch 1: "
        "H1 = X + attention(RMSNorm(X)), H2 = H1 + cross-attention(RMSNorm(H1), E) (queries from the "
        "block, keys and values from E), Y = H2 + ReLU(Z W1) W2 with Z = RMSNorm(H2). nh heads of "
        "d = h / nh, no mask; RMSNorm has no gain. Weights input-major: Wq, Wk, Wv, Wo and Wq_cross, "
        "Wk_cross, Wv_cross, Wo_cross (h, h), W1 (h, hi), W2 (hi, h). Constants eps, inv_hidden = 1/h, "
        f"scale = 1/sqrt(d). Stages round to bf16: {_ATTN}; RMSNorm exact, rounded once; adds rounded."
    )

    def generate_inputs(self, cfg: TaskConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
        s, h, nh, hi = cfg["s"], cfg["h"], cfg["nh"], cfg["hi"]
        return {
            "X": unit_activations(rng, (s, h)),
            "E": unit_activations(rng, (s, h)),
            **cm.attention_weights(rng, h, nh, nh, query_gain=cm.DECODER_QUERY_GAIN),
            **cm.attention_weights(rng, h, nh, nh, "_cross", query_gain=cm.DECODER_QUERY_GAIN),
            **mlp_weights(rng, h, hi),
        }

    def reference(self, cfg: TaskConfig, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        nh = cfg["nh"]
        z = cm.rmsnorm(inputs["X"])
        h1 = cm.add(inputs["X"], cm.projected_attention(z, z, inputs, nh, nh))
        h2 = cm.add(h1, cm.projected_attention(cm.rmsnorm(h1), inputs["E"], inputs, nh, nh, "_cross"))
        f = matmul_bf16(cm.relu(matmul_bf16(cm.rmsnorm(h2), inputs["W1"])), inputs["W2"])
        return {"Y": cm.add(h2, f)}

    def macs(self, cfg: TaskConfig) -> int:
        s, h, hi = cfg["s"], cfg["h"], cfg["hi"]
        return 2 * (4 * s * h * h + 2 * s * s * h) + 2 * s * h * hi
