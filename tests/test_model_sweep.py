"""The model sweep (torch_axon.tools.models) on a handful of architectures: the CI subset of
``make models``, one or a few small ones per family. Each must build tiny, run on axon, match
the CPU, train and generate."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="the sweep needs transformers")

from torch_axon.tools.models import compare, hf, model_zoo, report  # noqa: E402
from torch_axon.tools.models.families import FAMILIES  # noqa: E402
from torch_axon.tools.models.tiny_configs import shrink, tiny_config  # noqa: E402

# A dense decoder, a mixture of experts (integer histc routing), a state-space model, a
# masked LM and an encoder-decoder.
SUBSET = [
    ("causal-lm", "llama"),
    ("causal-lm", "mixtral"),
    ("causal-lm", "mamba"),
    ("masked-lm", "bert"),
    ("seq2seq", "t5"),
]


# One small architecture of each family added later: images, audio (a classifier, a CTC head, a
# speech encoder-decoder that generates), images inside text, torchvision and timm; diffusers'
# text-conditioned UNet (Stable Diffusion's) and a diffusion transformer with joint attention and
# rotary positions (Flux's).
NEW_FAMILIES = [
    ("image-classification", "vit"),
    ("audio-classification", "whisper"),
    ("ctc", "wav2vec2-conformer"),
    ("speech-seq2seq", "whisper"),
    ("image-text-to-text", "llava"),
    ("torchvision", "resnet18"),
    ("timm", "resnet10t"),
    ("diffusers", "UNet2DConditionModel"),
    ("diffusers", "FluxTransformer2DModel"),
]

# The CTC loss's backward has no axon kernel yet (README, "Not yet"): its fallback is expected.
EXPECTED_FALLBACKS = {"ctc": {"aten::_ctc_loss_backward"}}


def _needs_model_zoo(family: str) -> None:
    if family == "diffusers":
        pytest.importorskip("diffusers", reason="the diffusers family needs diffusers")
    if family in ("torchvision", "timm"):
        model_zoo.activate()
        pytest.importorskip(family, reason=f"{family} is installed by `make model-zoo` (.model-zoo)")


@pytest.mark.parametrize("family,arch", SUBSET + NEW_FAMILIES, ids=[f"{f}:{a}" for f, a in SUBSET + NEW_FAMILIES])
def test_architecture_matches_the_cpu(family, arch):
    _needs_model_zoo(family)
    r = FAMILIES[family].run(arch, 600)
    assert r["status"] == "ok", r
    assert r["runs"] and r["matches"] and r["trains_match"], r
    assert r["forward_error"] <= hf.FORWARD_TOL and r["grad_error"] <= hf.GRAD_TOL, r
    assert set(r["fallbacks"]) <= EXPECTED_FALLBACKS.get(family, set()), r["fallbacks"]
    if FAMILIES[family].generates:
        assert r["generates"] and r["same_tokens"], r


def test_tiny_vision_configs_stay_valid():
    swin = tiny_config("swin", image_side=64)
    assert swin.image_size == 64 and all(d == 1 for d in swin.depths)
    assert swin.window_size <= 64 // (swin.patch_size * 2 ** (len(swin.depths) - 1))  # fits the last stage
    convnext = tiny_config("convnext", image_side=64)
    assert tuple(convnext.hidden_sizes) == (96, 192, 384, 768)  # widths kept: the other lists fit them
    llava = tiny_config("llava")  # the image token indexes the shrunk text vocabulary
    assert llava.image_token_id < llava.text_config.vocab_size
    assert llava.image_token_id not in (llava.text_config.pad_token_id, llava.text_config.eos_token_id)


def test_python_nms_keeps_what_greedy_suppression_keeps():
    g = torch.Generator().manual_seed(0)
    corners = torch.rand(60, 2, generator=g) * 40
    boxes = torch.cat([corners, corners + 5 + torch.rand(60, 2, generator=g) * 20], dim=1)
    scores = torch.rand(60, generator=g)

    def iou(a, b):
        w = (torch.minimum(a[2], b[2]) - torch.maximum(a[0], b[0])).clamp(min=0)
        h = (torch.minimum(a[3], b[3]) - torch.maximum(a[1], b[1])).clamp(min=0)
        inter = w * h
        return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)

    expected: list[int] = []
    for i in scores.argsort(descending=True).tolist():
        if all(iou(boxes[i], boxes[k]) <= 0.3 for k in expected):
            expected.append(i)
    assert model_zoo.nms(boxes, scores, 0.3).tolist() == expected
    assert model_zoo.nms(boxes.to("axon"), scores.to("axon"), 0.3).cpu().tolist() == expected


def test_gradient_noise_allowance():
    """A gradient whose CPU value is float32 rounding noise (a batch norm's bias before another
    batch norm) is compared on the model's gradient scale; a real difference is still one."""
    grads = {"big": torch.tensor([1.0, -2.0]), "noise": torch.tensor([1e-9, -1e-9])}
    noisy = {"big": torch.tensor([1.0, -2.0]), "noise": torch.tensor([-1e-9, 1e-9])}
    assert compare._grad_error(grads, noisy) < compare.GRAD_TOL
    wrong = {"big": torch.tensor([1.0, -1.9]), "noise": grads["noise"]}
    assert compare._grad_error(grads, wrong) == pytest.approx(0.05)


def _judged(**fields) -> dict:
    record = {"runs": True, "forward_error": 0.0, "trains": True, **fields}
    compare._judge(record)
    return record


def test_float64_decides_where_float32_cannot_tell():
    """Past GRAD_TOL but within float32's noise, the float64 step on axon against the CPU's
    decides; within GRAD_TOL, or past the noise, float32 does."""
    assert _judged(grad_error=1e-3)["grad_check"] == "float32"
    assert _judged(grad_error=1e-3)["trains_match"]
    past_noise = _judged(grad_error=0.05, grad_noise_ratio=1.5, grad64_error=0.0)
    assert past_noise["grad_check"] == "float32" and not past_noise["trains_match"]
    assert _judged(grad_error=float("inf"))["grad_check"] == "float32"
    agrees = _judged(grad_error=0.5, grad_noise_ratio=0.5, grad64_error=1e-12)
    assert agrees["grad_check"] == "float64" and agrees["trains_match"] and agrees["status"] == "ok"
    differs = _judged(grad_error=0.5, grad_noise_ratio=0.5, grad64_error=1e-6)
    assert differs["grad_check"] == "float64" and not differs["trains_match"] and differs["status"] == "differs"
    undecided = _judged(grad_error=0.5, grad_noise_ratio=0.5, grad64_failure="RuntimeError: no double")
    assert not undecided["trains_match"] and "float64 check" in report.cause(undecided)
    assert "float64 gradients agree" in report._note(agrees) and "float64" in report.markdown([
        {"family": "timm", "arch": "a", **agrees, "fallbacks": {}}], {})  # fmt: skip


def test_float64_check_runs_the_step_on_axon():
    """The float64 step runs on axon (every parameter gets a float64 gradient there) and is
    compared with the CPU's float64 step: a small MLP agrees far within GRAD64_TOL."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    case = compare.Case(
        model=model,
        inputs=torch.randn(5, 8),
        outputs=lambda m, x: {"y": m(x)},
        loss=lambda m, x: m(x).square().mean(),
    )
    grads64 = compare._float64_grads(case)
    assert all(g.dtype == torch.float64 and g.device.type == "cpu" for g in grads64.values())
    on_axon = compare._float64_grads(case, "axon")
    assert all(g.dtype == torch.float64 and g.device.type == "axon" for g in on_axon.values())
    record: dict = {}
    compare.float64_check(case, grads64, record)
    assert record["grad64_error"] < compare.GRAD64_TOL and record["grad64_fallbacks"] == {}, record
    wrong = {n: g * (1 + 1e-6) for n, g in grads64.items()}  # a float32-sized error fails it
    compare.float64_check(case, wrong, record)
    assert record["grad64_error"] > compare.GRAD64_TOL


def test_tiny_configs_stay_valid():
    config = tiny_config("deepseek_v3")
    assert config.hidden_size == 64 and config.num_hidden_layers == 2
    # head_dim was qk_rope_head_dim in the default config: still equal, and the query head is
    # the sum of its parts
    assert config.head_dim == config.qk_rope_head_dim
    assert config.qk_head_dim == config.qk_nope_head_dim + config.qk_rope_head_dim
    assert config.num_key_value_heads == config.num_attention_heads  # equal in the default too
    llama = shrink(transformers.LlamaConfig(num_attention_heads=32, num_key_value_heads=8, pad_token_id=32000))
    assert llama.num_attention_heads % llama.num_key_value_heads == 0
    assert llama.pad_token_id < llama.vocab_size


def test_relative_error_and_report():
    a = torch.tensor([1.0, -2.0, float("nan")])
    assert hf.relative_error(a, a.to("axon")) == 0.0
    assert hf.relative_error(a, torch.tensor([1.0, -1.0, float("nan")])) == pytest.approx(0.5)
    assert hf.relative_error(a, torch.tensor([1.0, -2.0, 0.0])) == float("inf")
    records = [
        {
            "family": "causal-lm",
            "arch": "x",
            "status": "ok",
            "runs": True,
            "matches": True,
            "trains_match": True,
            "generates": True,
            "same_tokens": True,
            "fallbacks": {},
            "forward_error": 0.0,
            "grad_error": 0.0,
        },
        {
            "family": "causal-lm",
            "arch": "y",
            "status": "fails",
            "error": "NotImplementedError: axon: dtype ComplexFloat",
        },
        {"family": "causal-lm", "arch": "z", "status": "cpu_fails", "error": "ValueError: no"},
    ]
    s = report.summarize(records)["causal-lm"]
    assert (s["total"], s["reference"], s["runs"], s["matches"], s["zero_fallbacks"]) == (3, 2, 1, 1, 1)
    text = report.markdown(records, {})
    assert "1/2 (50.0%)" in text and "ComplexFloat" in text and "`z` (cpu_fails)" in text


def test_diffusers_family_accounts_for_every_model_class():
    """Every model class diffusers exports is swept or left out with a reason: a new diffusers
    release's classes show up here instead of going unnoticed."""
    diffusers = pytest.importorskip("diffusers", reason="the diffusers family needs diffusers")
    from torch_axon.tools.models import diffusers_models

    classes = {
        name
        for name in dir(diffusers)
        if not name.startswith("_")
        and isinstance(getattr(diffusers, name), type)
        and issubclass(getattr(diffusers, name), diffusers.ModelMixin)
    }
    swept = {arch.split("-")[0] for arch in diffusers_models.MODELS}
    assert swept <= classes, swept - classes
    assert not swept & set(diffusers_models.LEFT_OUT)
    assert classes - swept == set(diffusers_models.LEFT_OUT)


# --------------------------------------------------------------------------------------------
# The compiled mode (compiled.py): torch.compile on axon against eager on the CPU

# A dense decoder and an encoder: forward and a training step through compiled graphs.
COMPILED_SUBSET = [("causal-lm", "llama"), ("masked-lm", "bert")]


@pytest.mark.parametrize("family,arch", COMPILED_SUBSET, ids=[f"{f}:{a}" for f, a in COMPILED_SUBSET])
def test_architecture_compiled_matches_the_cpu(family, arch):
    r = FAMILIES[family].run_compiled(family, arch, 600)
    assert r["status"] == "ok", r
    assert r["graphs"] >= 1, r  # compiled, not run eagerly
    assert r["forward_error"] <= compare.FORWARD_TOL and r["grad_error"] <= compare.GRAD_TOL, r
    assert r["fallbacks"] == {}, r["fallbacks"]


class _DiffersCompiled(torch.nn.Module):
    """A Linear whose output is off by one when Dynamo traces it for one of ``devices``."""

    def __init__(self, devices: tuple[str, ...]):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)
        self.devices = devices

    def forward(self, x):
        y = self.linear(x)
        if torch.compiler.is_compiling() and x.device.type in self.devices:
            y = y + 1
        return y


def _compiled_record(devices: tuple[str, ...]) -> dict:
    def build():
        return compare.Case(
            model=_DiffersCompiled(devices),
            inputs=torch.randn(5, 8),
            outputs=lambda m, x: {"y": m(x)},
            loss=lambda m, x: m(x).square().mean(),
        )

    from torch_axon.tools.models.compiled import run_compiled

    return run_compiled(build, {"family": "test", "arch": "+".join(devices) or "none"}, 300)


def test_compiled_mode_tells_axon_failures_from_upstream_ones():
    """Right everywhere: ok. Wrong only when compiled for axon: axon's (differs, CPU Inductor
    ok). Wrong whenever compiled: upstream, and the report says which is which."""
    from torch_axon.tools.models import report_compiled

    ok, axon_only, everywhere = (_compiled_record(d) for d in ((), ("axon",), ("axon", "cpu")))
    assert ok["status"] == "ok" and ok["graphs"] >= 1, ok
    assert axon_only["status"] == "differs" and axon_only["cpu_compile"] == "ok", axon_only
    assert everywhere["status"] == "upstream" and "forward error" in everywhere["cpu_compile"], everywhere
    totals = report_compiled.totals([ok, axon_only, everywhere])
    assert (totals["tried"], totals["ok"], totals["axon"], totals["upstream"]) == (3, 1, 1, 1)
    text = "\n".join(report_compiled.markdown([ok, axon_only, everywhere], {"date": "today"}))
    assert "| test | axon | differs | forward differs" in text and "CPU Inductor: forward error" in text


def _sweep_with_a_crash(tmp_path, crash: str, *args: str) -> dict:
    """Runs the sweep (a supervised worker process) where AXON_SWEEP_CRASH kills the worker at
    ``crash``; returns the records it left, by architecture."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "AXON_SWEEP_CRASH": crash}
    argv = [sys.executable, "-m", "torch_axon.tools.models", "--out", str(tmp_path), *args]
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    jsonl = tmp_path / "data" / ("models-compile.jsonl" if "--compile" in args else "models.jsonl")
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    return {r["arch"]: r for r in records if r["status"] != "started"}


def test_sweep_goes_on_past_an_architecture_that_kills_its_process(tmp_path):
    """A worker killed by a signal on one architecture costs that architecture its verdict; the
    sweep records how it died and resumes past it with a new worker."""
    only = ("--family", "masked-lm", "--only", "roberta,xlm-roberta")
    records = _sweep_with_a_crash(tmp_path, "masked-lm/roberta", *only)
    assert records["roberta"]["status"] == "fails", records
    assert records["roberta"]["error"] == "the process was killed by SIGSEGV", records
    assert records["xlm-roberta"]["status"] == "ok", records
    assert "roberta" in (tmp_path / "models.md").read_text()


def test_compiled_sweep_asks_cpu_inductor_about_a_crash(tmp_path):
    """In the compiled mode a crash is checked on CPU Inductor in a fresh process: where that
    process dies too, the crash is upstream's (as for granite_speech's AOTAutograd cache entry,
    docs/models.md)."""
    only = ("--family", "masked-lm", "--only", "roberta")
    records = _sweep_with_a_crash(tmp_path, "masked-lm/roberta", "--compile", *only)
    assert records["roberta"]["status"] == "upstream", records
    assert records["roberta"]["cpu_compile"] == "the process was killed by SIGSEGV too", records
