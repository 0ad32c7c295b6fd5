"""torch.compile on axon (Inductor generating OpenCL C): compiled axon against eager CPU."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.testing import CompileCounterWithBackend
from torch._dynamo.utils import counters
from torch._inductor import metrics

DEVICE = "axon"

# name -> function of one float32 [8, 33] tensor
FUNCTIONS = {
    "pointwise_chain": lambda x: torch.relu(x * 1.5 + 0.25) * 0.5,
    "broadcast_promote": lambda x: x * torch.arange(33, device=x.device) + (x > 0),
    "unary_math": lambda x: torch.exp(x.clamp(max=3)) + torch.tanh(x) - torch.sigmoid(x) + x.abs().sqrt(),
    "log_family": lambda x: torch.log1p(x.abs()) + torch.log2(x.abs() + 1) + torch.expm1(x.clamp(max=2)),
    "trig": lambda x: torch.sin(x) * torch.cos(x) + torch.atan2(x, x + 2) + torch.asinh(x),
    "activations": lambda x: F.gelu(x) + F.silu(x) + F.mish(x) + F.elu(x) + F.leaky_relu(x, 0.1),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "where_masked": lambda x: torch.where(x > 0, x, x * 0.1).masked_fill(x < -1, 0),
    "minimum_maximum": lambda x: torch.maximum(x, x.flip(0)) - torch.minimum(x, 0.2 * x.flip(1)),
    "clamp": lambda x: x.clamp(-0.5, 0.5) + x.clamp(min=0.1),
    "remainder_floor": lambda x: torch.remainder(x * 3, 1.25) + torch.floor(x * 2) + torch.round(x * 4),
    "int_arith": lambda x: ((x * 10).to(torch.int32) // 3 % 4) * 2 - 1,
    "int64_floordiv": lambda x: (x * 100).long() // -7,
    "bool_logic": lambda x: (x > 0) & (x < 1) | (x < -1),
    "sum_rows": lambda x: x.sum(1),
    "sum_cols": lambda x: x.sum(0),
    "sum_all": lambda x: x.sum(),
    "mean_keepdim": lambda x: x.mean(-1, keepdim=True),
    "amax_amin": lambda x: x.amax(1) - x.amin(0).sum(),
    "prod": lambda x: (x * 0.1 + 1).prod(1),
    "argmax_rows": lambda x: x.argmax(1),
    "argmin_cols": lambda x: x.argmin(0),
    "var_std": lambda x: x.var(1) + x.std(0).sum(),
    "std_mean": lambda x: torch.std_mean(x, 0)[0],
    "softmax": lambda x: F.softmax(x, -1),
    "log_softmax_dim0": lambda x: F.log_softmax(x, 0),
    "logsumexp": lambda x: torch.logsumexp(x, 1),
    "layer_norm": lambda x: F.layer_norm(x, (33,)),
    "layer_norm_affine": lambda x: F.layer_norm(
        x, (33,), torch.linspace(0.5, 1.5, 33, device=x.device), torch.linspace(-1, 1, 33, device=x.device)
    ),
    "rms_norm": lambda x: F.rms_norm(x, (33,)),
    "group_norm": lambda x: F.group_norm(x.view(2, 4, 33), 2),
    "batch_norm_train": lambda x: F.batch_norm(x, None, None, training=True),
    "views": lambda x: x.view(4, 66).t().reshape(33, 8) * 2,
    "transpose_contiguous": lambda x: x.t().contiguous() + 1,
    "slicing": lambda x: x[1:7:2, ::3] * 3,
    "cat": lambda x: torch.cat([x, x * 2, x[:, :5]], 1),
    "stack": lambda x: torch.stack([x, -x], 0).sum(0),
    "pad_constant": lambda x: F.pad(x, (1, 2, 0, 1), value=0.5),
    "pad_reflect": lambda x: F.pad(x.unsqueeze(0), (2, 2), mode="reflect"),
    "gather": lambda x: x.gather(1, torch.arange(8, device=x.device).unsqueeze(1).expand(8, 3) % 33),
    "index_select": lambda x: x[torch.tensor([0, 2, 5], device=x.device)] * 2,
    "index_put": lambda x: x.index_put((torch.tensor([1, 3], device=x.device),), torch.ones(33, device=x.device)),
    "scatter_add": lambda x: torch.zeros(8, 5, device=x.device).scatter_add(
        1, (torch.arange(33, device=x.device) % 5).expand(8, 33), x
    ),
    "any_all": lambda x: (x > 2).any(1) | (x > -3).all(1),
    "cumsum": lambda x: x.cumsum(1),
    "topk": lambda x: x.topk(3, dim=1).values,
    "sort": lambda x: x.sort(1).values,
    "matmul_epilogue": lambda x: torch.relu(x @ x.t() + 1) * 2,
    "linear_bias_gelu": lambda x: F.gelu(
        F.linear(x, torch.ones(4, 33, device=x.device) * 0.1, torch.ones(4, device=x.device))
    ),
    "bmm": lambda x: torch.bmm(x.view(2, 4, 33), x.view(2, 4, 33).transpose(1, 2)).softmax(-1),
    "sdpa": lambda x: F.scaled_dot_product_attention(x.view(1, 2, 4, 33), x.view(1, 2, 4, 33), x.view(1, 2, 4, 33)),
    "float64": lambda x: (x.double() * 3).sum(1),
    "float16": lambda x: (x.half() * 2 + 1).float(),
    "bfloat16": lambda x: (x.bfloat16() * 2).sum(1).float(),
    "to_int_and_back": lambda x: (x * 4).round().int().float() / 4,
    "arange_mask": lambda x: x * (torch.arange(8, device=x.device) < 5).unsqueeze(1),
    "full_like": lambda x: torch.full_like(x, 2.5) + torch.zeros_like(x) + torch.ones(33, device=x.device),
    "expand": lambda x: x[:, :1].expand(8, 33) + x[:1],
    "squeeze_unsqueeze": lambda x: x.unsqueeze(0).unsqueeze(-1).squeeze(0).squeeze(-1) + 1,
    "pow": lambda x: x.abs().pow(1.5) + x.pow(2) + torch.pow(2.0, x.clamp(max=4)),
    "reciprocal_rsqrt": lambda x: torch.reciprocal(x.abs() + 1) + torch.rsqrt(x.abs() + 1),
    "sign_signbit": lambda x: torch.sign(x) + torch.signbit(x).float(),
    "isnan_nan_to_num": lambda x: torch.nan_to_num(torch.log(x)) + torch.isnan(torch.log(x)).float(),
    "erf": lambda x: torch.erf(x) + torch.erfc(x),
    "special_functions": lambda x: (
        torch.erfinv(x.clamp(-0.9, 0.9))
        + torch.i0(x)
        + torch.special.bessel_j1(x)
        + torch.digamma(x.abs() + 0.5)
        + torch.special.chebyshev_polynomial_t(x.clamp(-1, 1), 3)
    ),
    "hardtanh_hardswish": lambda x: F.hardtanh(x) + F.hardswish(x) + F.hardsigmoid(x),
    "dropout_eval": lambda x: F.dropout(x, 0.5, training=False) * 2,
    "mse": lambda x: F.mse_loss(x, x.flip(0)),
    "cross_entropy": lambda x: F.cross_entropy(x, torch.arange(8, device=x.device) % 33),
    "cosine_similarity": lambda x: F.cosine_similarity(x, x.flip(0), dim=1),
    "normalize": lambda x: F.normalize(x, dim=1),
}

# Inductor keeps bfloat16 / float16 intermediates in float32 (eager rounds each op): looser.
TOLERANCE = {"float16": 2e-3, "bfloat16": 2e-2}


def compare(want, got, tol=1e-4):
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got, strict=True):
        assert g.device.type == DEVICE
        torch.testing.assert_close(g.cpu(), w, atol=tol, rtol=tol)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_compiled_function_matches_eager_cpu(name):
    torch._dynamo.reset()
    fn = FUNCTIONS[name]
    x = torch.randn(8, 33, generator=torch.Generator().manual_seed(0))
    # Counted: a function Dynamo ran eagerly (no graph) would match the CPU and prove nothing.
    counter = CompileCounterWithBackend("inductor")
    compare(fn(x), torch.compile(fn, backend=counter)(x.to(DEVICE)), TOLERANCE.get(name, 1e-4))
    assert counter.frame_count >= 1 and counter.op_count >= 1, f"{name}: Inductor compiled no graph"


# On CPU devices a work-item reduces in sixteen interleaved lanes, along the reduction (rows) or
# along the outputs (columns), merged at the end: lengths around multiples of sixteen, ties and
# NaNs (the arg ops take the first index of the extreme, and the first NaN).
LANE_REDUCTIONS = {
    "argmax_rows": lambda x: x.argmax(1),
    "argmin_rows": lambda x: x.argmin(1),
    "argmax_cols": lambda x: x.argmax(0),
    "max_rows_min_cols": lambda x: x.amax(1).sum() + x.amin(0).sum(),
    "sum_rows_cols": lambda x: x.nan_to_num().sum(1).sum() + x.nan_to_num().sum(0).sum(),
    "var_rows": lambda x: x.nan_to_num().var(1),
    "var_cols": lambda x: x.nan_to_num().var(0),
    "softmax_cols": lambda x: x.nan_to_num().softmax(0),
    "log_softmax_rows": lambda x: x.nan_to_num().log_softmax(1),
    "prod_any": lambda x: (x.nan_to_num() * 0.01 + 1).prod(0) + (x > 3).any(0),
}


@pytest.mark.parametrize("shape", [(5, 16), (7, 47), (40, 33), (3, 100)])
@pytest.mark.parametrize("name", list(LANE_REDUCTIONS))
def test_reductions_in_lanes(name, shape):
    torch._dynamo.reset()
    fn = LANE_REDUCTIONS[name]
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(1)) * 2).round()  # ties
    x[1, 3] = x[2, -1] = x[-1, 5] = float("nan")
    got = torch.compile(fn)(x.to(DEVICE))
    torch.testing.assert_close(got.cpu(), fn(x), atol=1e-4, rtol=1e-4, equal_nan=True)


def test_reductions_in_lanes_of_dynamic_length():
    """A reduced length only known at run time: whole steps of lanes, then the rest."""
    torch._dynamo.reset()
    fn = torch.compile(lambda a: (a.sum(1), a.argmax(1), F.layer_norm(a, (a.shape[1],))))
    for n in (20, 37, 64):
        a = (torch.randn(6, n, generator=torch.Generator().manual_seed(n)) * 3).round()
        on_device = a.to(DEVICE)
        torch._dynamo.mark_dynamic(on_device, 1)
        got = fn(on_device)
        want = (a.sum(1), a.argmax(1), F.layer_norm(a, (n,)))
        for w, g in zip(want, got, strict=True):
            torch.testing.assert_close(g.cpu(), w, atol=1e-4, rtol=1e-4)


def test_fusion_launches_fewer_kernels_than_eager_ops():
    """A chain of six elementwise ops and a reduction compiles into one generated kernel."""
    torch._dynamo.reset()
    metrics.reset()
    fn = torch.compile(lambda x: ((x * 2 + 1).relu().exp() - 3).abs().sum(1))
    x = torch.randn(64, 128)
    compare((((x * 2 + 1).relu().exp() - 3).abs().sum(1)), fn(x.to(DEVICE)))
    assert metrics.generated_kernel_count == 1


def test_generator_key_stays_registered():
    """Axon's custom pass (its generator's digest in Inductor's FX graph cache key) survives
    Inductor's PrivateUse1 registration hook, which registers the device again without it."""
    from torch._inductor.codegen.common import custom_backend_passes, init_backend_registration

    from torch_axon.inductor.wrapper import GeneratorKey

    torch.compile(lambda x: x + 1)(torch.ones(2, device=DEVICE))
    init_backend_registration()
    assert isinstance(custom_backend_passes["axon"], GeneratorKey)


def test_cpp_wrapper_refused_with_the_reason():
    torch._dynamo.reset()
    with torch._inductor.config.patch(cpp_wrapper=True), pytest.raises(Exception, match="C\\+\\+ wrapper"):
        torch.compile(lambda x: x + 2)(torch.ones(3, device=DEVICE))
    torch._dynamo.reset()


def test_index_arithmetic_in_32_bits_where_it_fits():
    """Kernels whose elements and buffers fit index in 32 bits (permutes with division and
    modulo), while index values used as data stay 64-bit (x0 * 10^9 passes 2^31). Devices whose
    driver miscompiles widened 32-bit compares (the quirk widened_int_compare) index in 64 bits."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    x = torch.randn(4, 6, 10, 7)

    def permuted(x):
        return x.permute(2, 0, 3, 1).contiguous() * 2 + x.transpose(1, 2).reshape(10, 4, 7, 6).permute(0, 1, 2, 3)

    got, (code,) = run_and_get_code(torch.compile(permuted), x.to(DEVICE))
    compare(permuted(x), got)
    wide = "widened_int_compare" in torch.axon.get_device_properties(DEVICE).quirks
    assert ("long xindex" if wide else "int xindex") in code
    big = torch.compile(lambda n: n + torch.arange(8, device=n.device) * 1_000_000_000)
    n = torch.arange(8)
    assert torch.equal(big(n.to(DEVICE)).cpu(), n + torch.arange(8) * 1_000_000_000)


def test_pointwise_lanes_match_cpu():
    """Flat pointwise kernels run in lanes on CPU devices (a work-item's loop over neighbouring
    elements; the last work-item's lanes end at the last element and store only their own):
    gelu's backward on a size that is no multiple of the lanes, against CPU."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    x = torch.randn(1001, generator=torch.Generator().manual_seed(0), requires_grad=True)

    def gelu_grad(x):
        return torch.autograd.grad(F.gelu(x).sum(), x)[0]

    want = gelu_grad(x)
    xa = x.detach().to(DEVICE).requires_grad_()
    got, codes = run_and_get_code(torch.compile(lambda x: F.gelu(x) * 1), xa)
    compare(F.gelu(x.detach()), got.detach())
    got.sum().backward()
    compare(want, xa.grad)
    if torch.axon.get_device_properties(0).is_cpu:
        assert "xfirst" in codes[0]


def test_exp_tails_match_cpu():
    """Generated exp (straight-line arithmetic) within 2 ulp of float64 exp rounded to float,
    through its tails: overflow, subnormal results, and zero below -104 (masked softmax's
    e^-inf) from a zero factor rather than an underflowing product."""
    torch._dynamo.reset()
    tails = [-float("inf"), float("inf"), float("nan"), -1e30, -200.0, -104.5, -104.0, -103.97, -103.9]
    tails += [-100.0, -95.0, -90.0, -87.5, -87.3, -20.0, 0.0, 20.0, 88.0, 88.7, 89.0, 100.0]
    x = torch.cat([torch.tensor(tails), torch.linspace(-110, 90, 4001)])
    got = torch.compile(torch.exp)(x.to(DEVICE)).cpu()
    # A device without float denormals (no CL_FP_DENORM: Mesa's llvmpipe, whose vector exp the
    # lanes call) may flush subnormal results to zero, as OpenCL allows.
    denormals = torch.axon.get_device_properties(DEVICE).has_denormals
    atol = 3e-45 if denormals else torch.finfo(torch.float32).tiny
    torch.testing.assert_close(got, torch.exp(x.double()).float(), rtol=2.5e-7, atol=atol, equal_nan=True)


def test_masked_softmax_matches_cpu():
    """Causal attention as the math path decomposes it under compile (a masked _safe_softmax,
    whose masked scores are e^-inf), forward and backward, against CPU."""
    torch._dynamo.reset()
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 40, 16, generator=gen) for _ in range(3))

    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        want = attend(q, k, v)
        qa, ka, va = (t.to(DEVICE).requires_grad_() for t in (q, k, v))
        got = torch.compile(attend)(qa, ka, va)
        compare(want, got)
        got.sum().backward()
    qc, kc, vc = (t.clone().requires_grad_() for t in (q, k, v))
    attend(qc, kc, vc).sum().backward()
    for cpu, dev in ((qc, qa), (kc, ka), (vc, va)):
        compare(cpu.grad, dev.grad)


def test_dynamic_shapes_recompile_once():
    """The second distinct size recompiles into a size-generic kernel; later sizes reuse it."""
    torch._dynamo.reset()
    counters.clear()
    fn = torch.compile(lambda a: (a * 2).sum(-1).softmax(0))
    for n in (5, 7, 9, 13, 31):
        a = torch.randn(n, 6)
        compare((a * 2).sum(-1).softmax(0), fn(a.to(DEVICE)))
    assert counters["stats"]["unique_graphs"] == 2


def test_mark_dynamic_compiles_once():
    torch._dynamo.reset()
    counters.clear()
    fn = torch.compile(lambda a: F.layer_norm(a, (a.shape[-1],)) * 2)
    for n in (4, 6, 10):
        a = torch.randn(n, 16).to(DEVICE)
        torch._dynamo.mark_dynamic(a, 0)
        compare(F.layer_norm(a.cpu(), (16,)) * 2, fn(a))
    assert counters["stats"]["unique_graphs"] == 1


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 10))


def test_compiled_training_step_matches_cpu():
    """Forward and backward through AOTAutograd, then an eager optimizer step."""
    torch._dynamo.reset()
    ref, model = _mlp(), _mlp().to(DEVICE)
    opt_ref = torch.optim.AdamW(ref.parameters(), lr=1e-2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))

    def step(m, x, y):
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        return loss

    compiled = torch.compile(step)
    for _ in range(3):
        compare(step(ref, x, y).detach(), compiled(model, x.to(DEVICE), y.to(DEVICE)).detach(), 1e-5)
        for p, q in zip(model.parameters(), ref.parameters(), strict=True):
            torch.testing.assert_close(p.grad.cpu(), q.grad, atol=1e-5, rtol=1e-4)
        opt_ref.step(), opt.step(), opt_ref.zero_grad(), opt.zero_grad()


def test_inference_with_buffers_mutated():
    """Batch norm in training mode updates its running statistics inside the compiled region."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    ref = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    model.load_state_dict(ref.state_dict())
    model = model.to(DEVICE)
    x = torch.randn(2, 3, 8, 8)
    compare(ref(x), torch.compile(model)(x.to(DEVICE)))
    torch.testing.assert_close(model[1].running_mean.cpu(), ref[1].running_mean, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(model[1].running_var.cpu(), ref[1].running_var, atol=1e-5, rtol=1e-5)


def test_backend_named_axon():
    torch._dynamo.reset()
    fn = torch.compile(lambda a: a.sin() * 2, backend="axon")
    a = torch.randn(10)
    compare(a.sin() * 2, fn(a.to(DEVICE)))


def test_generated_source_that_fails_to_build_names_a_file(tmp_path):
    from torch_axon.inductor.runtime import AxonKernel

    kernel = AxonKernel("broken", "b", 0, "__kernel void broken(__global uchar *p_base, ulong p_offset) { oops; }")
    with pytest.raises(RuntimeError, match="failed to build; its OpenCL C source and the build log are in"):
        kernel.run([torch.zeros(1, device=DEVICE)], [1])


def _kernels_made(monkeypatch) -> list:
    from torch_axon.inductor import runtime

    made = []
    define = runtime.AxonKernel.__init__

    def remember(self, *args):
        define(self, *args)
        made.append(self)

    monkeypatch.setattr(runtime.AxonKernel, "__init__", remember)
    return made


def test_kernels_of_a_compiled_function_build_as_one_program(monkeypatch):
    """A wrapper's kernels build together at the first launch (runtime.py: PoCL's fixed cost of
    a build, about 0.3 s, once instead of once per kernel), and each still computes its own."""
    made = _kernels_made(monkeypatch)
    torch._dynamo.reset()

    def fn(a, b):
        return (a * b).sum(0), (a - b).amax(1), torch.relu(a + b).softmax(-1)

    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(6, 40, generator=g), torch.randn(6, 40, generator=g)
    got = torch.compile(fn)(a.to(DEVICE), b.to(DEVICE))
    for expected, out in zip(fn(a, b), got, strict=True):
        compare(expected, out)
    assert len(made) >= 2, [k.name for k in made]
    assert len({k._program for k in made}) == 1, {k.name: k._program for k in made}


def test_a_kernel_that_breaks_its_batch_is_built_alone_and_named(monkeypatch):
    """A failed batch build sends each kernel to build alone: the good ones run, and the broken
    one's error names it."""
    from torch_axon.inductor.prelude import prelude
    from torch_axon.inductor.runtime import AxonKernel

    params = "(__global uchar *p_base, ulong p_offset)"
    good = AxonKernel(
        "good_one",
        "b",
        0,
        f"{prelude()}\n__kernel void good_one{params} {{ ((__global float *)(p_base + p_offset))[0] = 7.0f; }}",
    )
    broken = AxonKernel("broken_one", "b", 0, f"{prelude()}\n__kernel void broken_one{params} {{ oops; }}")
    out = torch.zeros(1, device=DEVICE)
    good.run([out], (1,))
    assert out.item() == 7.0
    with pytest.raises(RuntimeError, match="generated kernel broken_one failed to build"):
        broken.run([out], (1,))


def test_compiled_dropout_statistics():
    """Random numbers in generated kernels (Philox): dropout keeps about 1 - p, scaled."""
    torch._dynamo.reset()
    x = torch.ones(200_000, device=DEVICE)
    out = torch.compile(lambda t: F.dropout(t, 0.3, training=True))(x).cpu()
    kept = out != 0
    assert abs(kept.float().mean().item() - 0.7) < 0.01
    torch.testing.assert_close(out[kept], torch.full_like(out[kept], 1 / 0.7))
    r = torch.compile(lambda t: torch.rand_like(t) + torch.randn_like(t) * 0)(x).cpu()
    assert 0 <= r.min() and r.max() < 1 and abs(r.mean().item() - 0.5) < 0.01


def _hf_models():
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    gpt2 = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(
            n_layer=2,
            n_embd=64,
            n_head=4,
            vocab_size=128,
            n_positions=64,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
        )
    )
    llama = transformers.LlamaForCausalLM(
        transformers.LlamaConfig(
            num_hidden_layers=2,
            hidden_size=64,
            intermediate_size=128,
            num_attention_heads=4,
            num_key_value_heads=2,
            vocab_size=128,
            max_position_embeddings=64,
        )
    )
    return {"gpt2": gpt2, "llama": llama}


@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_hugging_face_compiled_forward_and_training_step(arch):
    import copy

    torch.manual_seed(0)
    model = _hf_models()[arch]
    ids = torch.randint(0, 128, (2, 16))
    axon_model = copy.deepcopy(model).to(DEVICE)
    torch._dynamo.reset()
    model.eval(), axon_model.eval()
    with torch.no_grad():
        compare(model(ids).logits, torch.compile(axon_model)(ids.to(DEVICE)).logits)

    def step(m, ids):
        loss = m(ids, labels=ids).loss
        loss.backward()
        return loss

    torch._dynamo.reset()
    model.train(), axon_model.train()
    compare(step(model, ids).detach(), torch.compile(step)(axon_model, ids.to(DEVICE)).detach())
    for p, q in zip(axon_model.parameters(), model.parameters(), strict=True):
        if q.grad is not None:
            torch.testing.assert_close(p.grad.cpu(), q.grad, atol=1e-4, rtol=1e-3)


def test_compiled_code_that_saves_and_restores_the_rng_state():
    """freeze_rng_state / fork_rng inside compiled code call torch.axon's RNG-state functions:
    they are native, so Dynamo calls them instead of tracing into them."""
    from torch.testing._internal.common_utils import freeze_rng_state

    def draw(x):
        with freeze_rng_state():
            return torch.bernoulli(x)

    torch._dynamo.reset()
    x = torch.full((1000,), 0.5, device=DEVICE)
    out = torch.compile(draw)(x).cpu()
    assert set(out.unique().tolist()) <= {0.0, 1.0} and 300 < out.sum() < 700


@pytest.mark.parametrize("mode", ["reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
def test_compile_modes_run(mode):
    """The other modes work on axon (no CUDA graphs, nothing to autotune: they compile as the
    default mode does)."""
    torch._dynamo.reset()
    x = torch.randn(64, 32)
    fn = torch.compile(lambda t: F.softmax(t * 2, -1).sum(0), mode=mode)
    for _ in range(2):
        compare(F.softmax(x * 2, -1).sum(0), fn(x.to(DEVICE)), 1e-5)


def test_autocast_inside_compiled_region():
    torch._dynamo.reset()

    def fn(a, b):
        with torch.autocast("axon", dtype=torch.bfloat16):
            return (a @ b).relu()

    a, b = torch.randn(16, 32, device=DEVICE), torch.randn(32, 8, device=DEVICE)
    out = torch.compile(fn)(a, b)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out.float().cpu(), fn(a, b).float().cpu(), atol=1e-2, rtol=1e-2)


def test_flex_attention_refused_with_the_reason():
    """flex_attention is refused on axon, eager or compiled: PyTorch's front end accepts only the
    devices Inductor has flex templates for (Triton on GPUs, C++ on the CPU), before any of
    Axon's code runs. The message names the device."""
    from torch.nn.attention.flex_attention import flex_attention

    torch._dynamo.reset()
    q, k, v = (torch.randn(1, 2, 16, 8, device=DEVICE) for _ in range(3))
    with pytest.raises(ValueError, match="FlexAttention is only supported on .* Found input tensors on axon device"):
        torch.compile(flex_attention)(q, k, v, score_mod=lambda score, b, h, qi, ki: score)
