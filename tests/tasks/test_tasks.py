"""The level-1 task registry and contract: names, shapes, configs, inputs, references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kcgym.tasks import TASKS, get_task
from kcgym.tasks.base import BF16_TOLERANCE, Task, TaskConfig
from kcgym.tasks.manifest import MANIFEST
from kcgym.tasks.numerics import is_bf16

# The paper's tasks (Table 4) as the manifest declares them, in its order: the expectations below are derived
# from it, so a new task needs no edit here; the paper's own tables (shapes, levels) are written out.
PAPER_ORDER = [(e.name, e.title, e.variants["bf16"].category) for e in MANIFEST if e.paper_id is not None]
# Table 4: tasks 1-12 are level 1 (primitives), 13-20 level 2 (composites), 21-23 level 3 (end-to-end).
PAPER_LEVELS = {**dict.fromkeys(range(1, 13), 1), **dict.fromkeys(range(13, 21), 2), **dict.fromkeys(range(21, 24), 3)}

ELEMENTS = (256, 1024, 2048, 8192, 16384)
MATMUL_SHAPES = ((4, 64, 64), (8, 128, 128), (16, 128, 256), (32, 256, 256), (64, 256, 512))
CONV_SHAPES = ((8, 64, 64, 1), (8, 64, 64, 3), (8, 64, 128, 3), (8, 64, 256, 3), (16, 64, 128, 3))
MLP_SHAPES = ((4, 64, 128), (8, 128, 256), (16, 128, 512), (32, 256, 512), (64, 256, 1024))
ATTN_SHAPES = ((32, 64), (64, 128), (64, 256), (128, 128), (128, 256))
DECODER_SHAPES = ((32, 64, 1, 128), (64, 128, 2, 256), (64, 256, 4, 512), (128, 256, 4, 512), (128, 512, 8, 1024))
# Paper Table 12 (PLENA), in the parameter names kcgym uses.
NPU_CONFIGS: dict[str, list[dict[str, int]]] = {
    "silu": [{"n": n} for n in ELEMENTS],
    "relu": [{"n": n} for n in ELEMENTS],
    "gelu": [{"n": n} for n in ELEMENTS],
    "softmax": [{"n": n, "hidden": 64} for n in ELEMENTS],
    "layernorm": [{"n": n, "hidden": 64} for n in ELEMENTS],
    "rmsnorm": [{"n": n, "hidden": 64} for n in ELEMENTS],
    "gemv": [{"M": m, "N": n} for m, n in ((64, 512), (128, 512), (256, 512), (512, 512), (512, 1024))],
    "matmul": [{"M": m, "K": k, "N": n} for m, k, n in MATMUL_SHAPES],
    "batch_matmul": [
        {"b": b, "M": m, "K": k, "N": n}
        for b, (m, k, n) in zip((2, 4, 8, 16, 32), MATMUL_SHAPES, strict=True)
    ],
    "linear": [{"n": m, "hin": k, "hout": n} for m, k, n in MATMUL_SHAPES],
    # Not in Table 12 (PLENA could not run them): the paper's Table 14 (Coral) shapes with channels x8
    "conv2d": [{"H": h, "cin": ci, "cout": co, "k": k} for h, ci, co, k in CONV_SHAPES],
    "depthwise_conv": [{"H": h, "c": c, "k": k} for h, c, k in ((8, 128, 3), (16, 64, 3), (16, 128, 3), (16, 128, 5),
                                                                  (16, 256, 5))],
    "conv_block": [{"H": h, "cin": ci, "cout": co, "k": k} for h, ci, co, k in CONV_SHAPES],
    "rope": [{"s": s, "d": d} for s, d in ((32, 64), (64, 128), (128, 64), (128, 128), (256, 128))],
    "ffn": [{"n": n, "h": h, "hi": i} for n, h, i in MLP_SHAPES],
    "swiglu": [{"n": n, "h": h, "hi": i} for n, h, i in MLP_SHAPES],
    "sdpa": [{"s": s, "h": h} for s, h in ATTN_SHAPES],
    "flash_attention": [{"s": s, "h": h} for s, h in ATTN_SHAPES],
    "mha": [{"s": s, "h": h, "nh": nh} for s, h, nh in ((32, 64, 1), (64, 128, 2), (64, 256, 4), (128, 256, 4),
                                                           (128, 512, 8))],
    "gqa": [{"s": s, "h": h, "nh": nh, "nkv": kv} for s, h, nh, kv in (
        (32, 128, 2, 1), (64, 256, 4, 2), (64, 512, 8, 4), (128, 512, 8, 4), (128, 512, 8, 2))],
    "mqa": [{"s": s, "h": h, "nh": nh} for s, h, nh in ((32, 128, 2), (64, 256, 4), (64, 512, 8), (128, 512, 8),
                                                           (128, 512, 8))],
    "decoder_llama": [{"s": s, "h": h, "nh": nh, "hi": i} for s, h, nh, i in DECODER_SHAPES],
    "decoder_t5": [{"s": s, "h": h, "nh": nh, "hi": i} for s, h, nh, i in DECODER_SHAPES],
}
# Paper Table 13 (AMD NPU), the shapes of the VLIW machine, for the level-2 and level-3 tasks.
VLIW_CONFIGS: dict[str, list[tuple[int, ...]]] = {
    "rope": [(8, 16), (16, 64), (32, 16), (64, 64), (128, 64)],
    "ffn": [(8, 64, 128), (16, 128, 256), (32, 256, 512), (64, 256, 512), (128, 512, 1024)],
    "sdpa": [(8, 16), (16, 32), (32, 64), (64, 64), (128, 64)],
    "mha": [(8, 64, 1), (16, 128, 2), (32, 128, 8), (64, 256, 4), (128, 256, 4)],
    "gqa": [(8, 64, 4, 1), (16, 128, 2, 1), (32, 128, 8, 2), (64, 256, 4, 2), (128, 256, 4, 2)],
    "mqa": [(8, 64, 4), (16, 128, 2), (32, 128, 8), (64, 256, 4), (128, 512, 8)],
    "decoder_llama": [(8, 64, 4, 256), (16, 128, 2, 512), (32, 128, 8, 512), (64, 256, 4, 1024), (128, 256, 4, 1024)],
}
VLIW_CONFIGS |= {"swiglu": VLIW_CONFIGS["ffn"], "flash_attention": VLIW_CONFIGS["sdpa"],
                 "decoder_t5": VLIW_CONFIGS["decoder_llama"]}
# The spatial tasks on the VLIW machine: Table 14 (Coral) shapes, channels x8 (conv) and x4 (depthwise).
VLIW_CONFIGS["conv2d"] = [(8, 32, 64, 1), (8, 64, 64, 3), (8, 64, 128, 3), (8, 64, 256, 3), (8, 256, 64, 3)]
VLIW_CONFIGS["conv_block"] = VLIW_CONFIGS["conv2d"]
VLIW_CONFIGS["depthwise_conv"] = [(8, 64, 3), (16, 32, 3), (16, 64, 3), (16, 64, 5), (16, 128, 5)]


def expected_tensors(name: str, p: dict[str, int]) -> list[tuple[str, tuple[int, ...], str]]:
    """Tensor names, storage shapes and roles, written out independently of the task modules."""
    if name in ("silu", "relu", "gelu"):
        return [("X", (p["n"],), "input"), ("Y", (p["n"],), "output")]
    if name in ("softmax", "layernorm", "rmsnorm"):
        shape = (p["n"] // 64, 64)
        return [("X", shape, "input"), ("Y", shape, "output")]
    if name == "gemv":
        return [("A", (p["M"], p["N"]), "input"), ("x", (p["N"],), "input"), ("y", (p["M"],), "output")]
    if name == "matmul":
        m, k, n = p["M"], p["K"], p["N"]
        return [("X", (m, k), "input"), ("W", (k, n), "input"), ("Y", (m, n), "output")]
    if name == "batch_matmul":
        b, m, k, n = p["b"], p["M"], p["K"], p["N"]
        return [("X", (b, m, k), "input"), ("W", (b, k, n), "input"), ("Y", (b, m, n), "output")]
    if name in ("conv2d", "conv_block"):
        h, ci, co, k = p["H"], p["cin"], p["cout"], p["k"]
        bn = [("scale", (co,), "input"), ("shift", (co,), "input")] if name == "conv_block" else []
        return [("X", (h, h, ci), "input"), ("W", (k, k, ci, co), "input"), *bn, ("Y", (h, h, co), "output")]
    if name == "depthwise_conv":
        h, c, k = p["H"], p["c"], p["k"]
        return [("X", (h, h, c), "input"), ("W", (k, k, c), "input"), ("Y", (h, h, c), "output")]
    if name in COMPOSITE_TENSORS:
        return COMPOSITE_TENSORS[name](p)
    n, hin, hout = p["n"], p["hin"], p["hout"]
    return [
        ("X", (n, hin), "input"),
        ("W", (hin, hout), "input"),
        ("b", (hout,), "input"),
        ("Y", (n, hout), "output"),
    ]


def _attn_weights(h: int, kv: int, suffix: str = "") -> list[tuple[str, tuple[int, ...], str]]:
    return [(f"Wq{suffix}", (h, h), "input"), (f"Wk{suffix}", (h, kv), "input"), (f"Wv{suffix}", (h, kv), "input"),
            (f"Wo{suffix}", (h, h), "input")]


def _projected(p: dict[str, int], kv_heads: int) -> list[tuple[str, tuple[int, ...], str]]:
    s, h = p["s"], p["h"]
    return [("X", (s, h), "input"), *_attn_weights(h, kv_heads * h // p["nh"]), ("Y", (s, h), "output")]


COMPOSITE_TENSORS = {
    "rope": lambda p: [("X", (p["s"], p["d"]), "input"), ("cos", (p["s"], p["d"]), "input"),
                       ("sin", (p["s"], p["d"]), "input"), ("P", (p["d"], p["d"]), "input"),
                       ("Y", (p["s"], p["d"]), "output")],
    "ffn": lambda p: [("X", (p["n"], p["h"]), "input"), ("W1", (p["h"], p["hi"]), "input"),
                      ("W2", (p["hi"], p["h"]), "input"), ("Y", (p["n"], p["h"]), "output")],
    "swiglu": lambda p: [("X", (p["n"], p["h"]), "input"), ("W1", (p["h"], p["hi"]), "input"),
                         ("W3", (p["h"], p["hi"]), "input"), ("W2", (p["hi"], p["h"]), "input"),
                         ("Y", (p["n"], p["h"]), "output")],
    "sdpa": lambda p: [(n, (p["s"], p["h"]), "input") for n in "QKV"] + [("O", (p["s"], p["h"]), "output")],
    "mha": lambda p: _projected(p, p["nh"]),
    "gqa": lambda p: _projected(p, p["nkv"]),
    "mqa": lambda p: _projected(p, 1),
    "decoder_llama": lambda p: [("X", (p["s"], p["h"]), "input"), *_attn_weights(p["h"], p["h"]),
                                ("W1", (p["h"], p["hi"]), "input"), ("W3", (p["h"], p["hi"]), "input"),
                                ("W2", (p["hi"], p["h"]), "input"), ("Y", (p["s"], p["h"]), "output")],
    "decoder_t5": lambda p: [("X", (p["s"], p["h"]), "input"), ("E", (p["s"], p["h"]), "input"),
                             *_attn_weights(p["h"], p["h"]), *_attn_weights(p["h"], p["h"], "_cross"),
                             ("W1", (p["h"], p["hi"]), "input"), ("W2", (p["hi"], p["h"]), "input"),
                             ("Y", (p["s"], p["h"]), "output")],
}
COMPOSITE_TENSORS["flash_attention"] = COMPOSITE_TENSORS["sdpa"]


def _attn_macs(p: dict[str, int], kv_heads: int) -> int:
    s, h = p["s"], p["h"]
    return 2 * s * h * h + 2 * s * h * (kv_heads * h // p["nh"]) + 2 * s * s * h


def expected_macs(name: str, p: dict[str, int]) -> int:
    return {
        "rope": lambda: 2 * p["s"] * p["d"],
        "ffn": lambda: 2 * p["n"] * p["h"] * p["hi"],
        "swiglu": lambda: 3 * p["n"] * p["h"] * p["hi"],
        "sdpa": lambda: 2 * p["s"] ** 2 * p["h"],
        "flash_attention": lambda: 2 * p["s"] ** 2 * p["h"],
        "mha": lambda: _attn_macs(p, p["nh"]),
        "gqa": lambda: _attn_macs(p, p["nkv"]),
        "mqa": lambda: _attn_macs(p, 1),
        "decoder_llama": lambda: _attn_macs(p, p["nh"]) + 3 * p["s"] * p["h"] * p["hi"],
        "decoder_t5": lambda: 2 * _attn_macs(p, p["nh"]) + 2 * p["s"] * p["h"] * p["hi"],
        "gemv": lambda: p["M"] * p["N"],
        "matmul": lambda: p["M"] * p["K"] * p["N"],
        "batch_matmul": lambda: p["b"] * p["M"] * p["K"] * p["N"],
        "linear": lambda: p["n"] * p["hin"] * p["hout"],
        "conv2d": lambda: p["H"] * p["H"] * p["k"] ** 2 * p["cin"] * p["cout"],
        "conv_block": lambda: p["H"] * p["H"] * p["k"] ** 2 * p["cin"] * p["cout"],
        "depthwise_conv": lambda: p["H"] * p["H"] * p["k"] ** 2 * p["c"],
    }.get(name, lambda: 0)()


ALL_CONFIGS = [(name, i) for name in TASKS for i in range(1, 6)]
PAPER_CONFIGS = [(name, i) for name, i in ALL_CONFIGS if name in NPU_CONFIGS]  # the paper's tasks, written out above


def rng_for(cfg: TaskConfig, seed: int = 0) -> np.random.Generator:
    return np.random.default_rng([seed, 0, cfg.index])  # the evaluation harness's seeding scheme


# --- the registry ------------------------------------------------------------------------------


def test_registry_is_in_paper_order() -> None:
    assert [e.paper_id for e in MANIFEST if e.paper_id is not None] == list(range(1, 24))  # Table 4's ids, in order
    assert [(t.name, t.title, t.category) for t in TASKS.values() if t.entry.paper_id is not None] == PAPER_ORDER
    assert list(TASKS) == [e.name for e in MANIFEST if "bf16" in e.variants]
    for name, task in TASKS.items():
        assert isinstance(task, Task)
        if task.entry.paper_id is not None:
            assert task.level == PAPER_LEVELS[task.entry.paper_id]
        assert get_task(name) is task


def test_get_task_unknown_lists_names_and_suggests() -> None:
    with pytest.raises(KeyError) as err:
        get_task("softmx")
    msg = str(err.value)
    assert "did you mean 'softmax'?" in msg
    for name in TASKS:
        assert name in msg
    with pytest.raises(KeyError, match="did you mean 'matmul'"):
        get_task("GEMM")  # the paper's title points at the env-id name
    with pytest.raises(KeyError, match="did you mean 'batch_matmul'"):
        get_task("batch-matmul")
    with pytest.raises(KeyError) as err:
        get_task("conv_transpose_3d")
    assert "did you mean" not in str(err.value)


@pytest.mark.parametrize("name", list(TASKS))
def test_text_fields(name: str) -> None:
    task = TASKS[name]
    assert task.formula.strip()
    assert 100 < len(task.description) < 800
    if task.level == 1:
        assert task.tolerance == BF16_TOLERANCE
    else:  # composites may widen atol to the measured drift of their staged roundings, never by much
        assert task.tolerance.atol <= 2.0**-5 and task.tolerance.rtol == BF16_TOLERANCE.rtol


def test_the_paper_tables_cover_every_paper_task() -> None:
    assert set(NPU_CONFIGS) == {name for name, _, _ in PAPER_ORDER}


@pytest.mark.parametrize("name", list(NPU_CONFIGS))
def test_npu_configs_match_paper_table_12(name: str) -> None:
    task = TASKS[name]
    cfgs = task.configs("NPU")
    assert [c.index for c in cfgs] == [1, 2, 3, 4, 5]
    assert [c.params for c in cfgs] == NPU_CONFIGS[name]
    if name in VLIW_CONFIGS:
        assert [tuple(c.params.values()) for c in task.configs("VLIW")] == VLIW_CONFIGS[name]
    elif task.level > 1:
        with pytest.raises(KeyError):
            task.configs("VLIW")


# Paper Table 13 (AMD NPU), the VLIW tile's configurations.
VLIW_MATMUL_SHAPES = ((8, 64, 64), (16, 256, 128), (32, 256, 256), (64, 512, 256), (128, 512, 1024))
VLIW_L1_CONFIGS: dict[str, list[dict[str, int]]] = {
    **{name: NPU_CONFIGS[name] for name in ("silu", "relu", "gelu", "softmax", "layernorm", "rmsnorm")},
    "gemv": [{"M": m, "N": n} for m, n in ((64, 64), (128, 256), (256, 256), (512, 256), (512, 1024))],
    "matmul": [{"M": m, "K": k, "N": n} for m, k, n in VLIW_MATMUL_SHAPES],
    "batch_matmul": [
        {"b": b, "M": m, "K": k, "N": n}
        for b, m, k, n in (
            (8, 16, 64, 64), (16, 32, 256, 128), (16, 64, 256, 256), (32, 64, 512, 256), (32, 64, 256, 1024)
        )
    ],
    "linear": [{"n": n, "hin": i, "hout": o} for n, i, o in
               ((8, 64, 64), (16, 256, 128), (32, 256, 256), (64, 256, 512), (128, 1024, 512))],
}


@pytest.mark.parametrize("name", list(VLIW_L1_CONFIGS))
def test_vliw_level1_configs_match_paper_table_13(name: str) -> None:
    assert [c.params for c in TASKS[name].configs("VLIW")] == VLIW_L1_CONFIGS[name]


@pytest.mark.parametrize(("name", "index"), PAPER_CONFIGS)
def test_tensors_and_macs(name: str, index: int) -> None:
    task = TASKS[name]
    cfg = task.config("NPU", index)
    specs = task.tensors(cfg)
    assert [(t.name, t.shape, t.role) for t in specs] == expected_tensors(name, cfg.params)
    assert task.macs(cfg) == expected_macs(name, cfg.params)
    assert [t.name for t in task.inputs(cfg) + task.outputs(cfg)] == [t.name for t in specs]


@pytest.mark.parametrize(("name", "index"), ALL_CONFIGS)
def test_inputs_and_reference_are_bf16_float32(name: str, index: int) -> None:
    task = TASKS[name]
    cfg = task.config("NPU", index)
    inputs = task.generate_inputs(cfg, rng_for(cfg))
    assert list(inputs) == [t.name for t in task.inputs(cfg)]
    expected = task.reference(cfg, inputs)
    assert list(expected) == [t.name for t in task.outputs(cfg)]
    for spec in task.tensors(cfg):
        arr = inputs[spec.name] if spec.role == "input" else expected[spec.name]
        assert arr.dtype == np.float32, spec.name
        assert arr.shape == spec.shape, spec.name
        assert np.all(np.isfinite(arr)), spec.name
        assert is_bf16(arr), spec.name


@pytest.mark.parametrize("name", list(TASKS))
def test_inputs_are_deterministic(name: str) -> None:
    task = TASKS[name]
    cfg = task.config("NPU", 2)
    a = task.generate_inputs(cfg, rng_for(cfg, seed=7))
    b = task.generate_inputs(cfg, rng_for(cfg, seed=7))
    c = task.generate_inputs(cfg, rng_for(cfg, seed=8))
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
        if key not in task.tables:  # a constant input (rope's rotate-half permutation) is the same in every set
            assert not np.array_equal(a[key], c[key])


def test_constants() -> None:
    cfg = TASKS["layernorm"].config("NPU", 3)
    for name in ("layernorm", "rmsnorm"):
        assert TASKS[name].constants(cfg) == {"eps": 1e-5, "inv_hidden": 1 / 64}
    gelu = TASKS["gelu"].constants(TASKS["gelu"].config("NPU", 1))
    assert gelu == {"sqrt_2_over_pi": pytest.approx(0.7978845608028654), "gelu_coeff": 0.044715}
    for name in ("silu", "relu", "softmax", "gemv", "matmul", "batch_matmul", "linear"):
        task = TASKS[name]
        assert task.constants(task.config("NPU", 1)) == {}


# --- references against independent values ----------------------------------------------------


def run_elementwise(name: str, values: list[float]) -> np.ndarray:
    task = TASKS[name]
    cfg = task.config("NPU", 1)
    x = np.zeros(cfg["n"], dtype=np.float32)
    x[: len(values)] = values
    return task.reference(cfg, {"X": x})["Y"][: len(values)]


def test_activation_references_known_values() -> None:
    xs = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0]
    phi = [0.5 * (1 + math.erf(x / math.sqrt(2))) for x in xs]  # the normal CDF
    gelu = [-0.0040496, -0.1586553, -0.1542687, 0.0, 0.3457313, 0.8413447, 2.9959504]
    assert [x * p for x, p in zip(xs, phi, strict=True)] == pytest.approx(gelu, abs=1e-6)
    np.testing.assert_allclose(run_elementwise("gelu", xs), gelu, rtol=2**-8, atol=1e-6)
    silu = [x / (1 + math.exp(-x)) for x in xs]
    np.testing.assert_allclose(run_elementwise("silu", xs), silu, rtol=2**-8, atol=1e-6)
    np.testing.assert_array_equal(run_elementwise("relu", xs), [0, 0, 0, 0, 0.5, 1, 3])


def test_normalisation_reference_properties() -> None:
    for name in ("softmax", "layernorm", "rmsnorm"):
        task = TASKS[name]
        cfg = task.config("NPU", 3)
        x = task.generate_inputs(cfg, rng_for(cfg))["X"]
        y = task.reference(cfg, {"X": x})["Y"].astype(np.float64)
        if name == "softmax":
            np.testing.assert_allclose(y.sum(-1), 1.0, atol=0.02)
            assert np.all(np.argmax(y, -1) == np.argmax(x, -1))
        elif name == "layernorm":
            np.testing.assert_allclose(y.mean(-1), 0.0, atol=0.01)
            np.testing.assert_allclose(y.std(-1), 1.0, atol=0.01)
        else:
            np.testing.assert_allclose(np.sqrt((y * y).mean(-1)), 1.0, atol=0.01)
            np.testing.assert_array_equal(np.sign(y), np.sign(x))
    # Shift invariance: a softmax reference that skips the max subtraction would overflow here.
    softmax = TASKS["softmax"]
    cfg = softmax.config("NPU", 1)
    x = softmax.generate_inputs(cfg, rng_for(cfg))["X"]
    base = softmax.reference(cfg, {"X": x})["Y"]
    np.testing.assert_array_equal(softmax.reference(cfg, {"X": x + np.float32(512)})["Y"], base)


@pytest.mark.parametrize("name", ["gemv", "matmul", "batch_matmul", "linear"])
def test_matrix_references_match_float64(name: str) -> None:
    task = TASKS[name]
    cfg = task.config("NPU", 3)
    inputs = task.generate_inputs(cfg, rng_for(cfg))
    f64 = {k: v.astype(np.float64) for k, v in inputs.items()}
    (got,) = task.reference(cfg, inputs).values()
    u = 2.0**-8  # bf16 unit roundoff; fp32 accumulation error is far below it at these sizes
    if name == "gemv":
        want, bound = f64["A"] @ f64["x"], 0.0
    elif name == "linear":
        prod = f64["X"] @ f64["W"]
        want, bound = prod + f64["b"], u * np.abs(prod)  # the product is rounded before the bias add
    else:
        want, bound = np.matmul(f64["X"], f64["W"]), 0.0
    assert np.all(np.abs(got - want) <= bound + u * np.abs(want) + 1e-5)


def test_task_families_resolve_by_the_accelerators_number_format() -> None:
    from kcgym.registry import task_for
    from kcgym.tasks import tasks_for

    assert tasks_for("bf16") is TASKS
    assert task_for("NPU", "matmul") is TASKS["matmul"]
    with pytest.raises(KeyError, match="number format 'int4'"):
        tasks_for("int4")
    with pytest.raises(KeyError, match="did you mean 'matmul'"):
        task_for("NPU", "matmull")


# --- composite references against independent float64 models ---------------------------------


def _f64_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, nh: int, nkv: int) -> np.ndarray:
    """Grouped attention with einsum: query head i reads K/V head i // (nh / nkv)."""
    s, d = q.shape[0], q.shape[1] // nh
    qh = q.reshape(s, nh, d).transpose(1, 0, 2)
    kh = np.repeat(k.reshape(-1, nkv, d).transpose(1, 0, 2), nh // nkv, axis=0)
    vh = np.repeat(v.reshape(-1, nkv, d).transpose(1, 0, 2), nh // nkv, axis=0)
    logits = np.einsum("hqd,hkd->hqk", qh, kh) / math.sqrt(d)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("hqk,hkd->hqd", w, vh).transpose(1, 0, 2).reshape(s, nh * d)


def _f64_rmsnorm(x: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5)


def _f64_silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


def _f64_model(name: str, p: dict[str, int], i: dict[str, np.ndarray]) -> np.ndarray:
    if name == "rope":
        x, half = i["X"], p["d"] // 2
        return x * i["cos"] + np.concatenate([-x[:, half:], x[:, :half]], axis=1) * i["sin"]
    if name == "ffn":
        return _f64_silu(i["X"] @ i["W1"]) @ i["W2"]
    if name == "swiglu":
        return (_f64_silu(i["X"] @ i["W1"]) * (i["X"] @ i["W3"])) @ i["W2"]
    if name in ("sdpa", "flash_attention"):
        return _f64_attention(i["Q"], i["K"], i["V"], 1, 1)
    nh = p["nh"]
    nkv = {"gqa": p.get("nkv"), "mqa": 1}.get(name, nh)

    def attn(z: np.ndarray, c: np.ndarray, sfx: str = "") -> np.ndarray:
        return _f64_attention(z @ i["Wq" + sfx], c @ i["Wk" + sfx], c @ i["Wv" + sfx], nh, nkv) @ i["Wo" + sfx]

    if name in ("mha", "gqa", "mqa"):
        return attn(i["X"], i["X"])
    h = i["X"] + attn(_f64_rmsnorm(i["X"]), _f64_rmsnorm(i["X"]))
    if name == "decoder_llama":
        z = _f64_rmsnorm(h)
        return h + (_f64_silu(z @ i["W1"]) * (z @ i["W3"])) @ i["W2"]
    h = h + attn(_f64_rmsnorm(h), i["E"], "_cross")
    return h + np.maximum(_f64_rmsnorm(h) @ i["W1"], 0) @ i["W2"]


# the paper's composites with a float64 model below (conv_block's own model is in test_spatial_tasks.py)
COMPOSITES = [e.name for e in MANIFEST if e.paper_id is not None and e.level > 1 and e.name != "conv_block"]


@pytest.mark.parametrize("name", COMPOSITES)
def test_composite_references_follow_an_independent_float64_model(name: str) -> None:
    """The staged bf16 references stay close to a plain float64 model written independently (einsum
    attention, explicit rotate-half): a wrong head grouping, scale or stage order would not."""
    task = TASKS[name]
    cfg = task.config("NPU", 2)
    inputs = task.generate_inputs(cfg, rng_for(cfg))
    (got,) = task.reference(cfg, inputs).values()
    want = _f64_model(name, cfg.params, {k: v.astype(np.float64) for k, v in inputs.items()})
    err = np.abs(got - want)
    assert np.mean(err) < 0.01 and np.max(err) < 0.15, (float(np.mean(err)), float(np.max(err)))
