"""torch.optim's fused steps (Adam, AdamW, SGD, Adagrad with fused=True) on axon against the same
optimizers with fused=True on the CPU: several steps, the flags that change the math, float32 /
float16 / bfloat16 parameters, tensor learning rates, and the GradScaler arguments (grad_scale,
found_inf) of aten::_fused_adam_ & co. called directly. Every run must be native: the fused ops
have kernels of their own (runtime family fused_optim) and the foreach forms run on native ops.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from conftest import DEVICE, no_fallback  # noqa: F401  (fixture)

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# Shapes of a small model's parameters, with lengths that end inside a work-group, a 0-d one and
# an empty one; nine tensors take more than one launch of every fused kernel.
SHAPES = [(64, 33), (33,), (1000,), (3, 5, 7), (), (0, 4), (17, 9), (4097,), (2, 2)]
STEPS = 4

# float32 is computed as PyTorch's CPU kernels do it (same operation order, bias corrections in
# double); what remains is the last bit of a few roundings (a fused multiply-add the device may
# contract). float16 / bfloat16 results are rounded once per stored value on both sides; a value
# that lands on a rounding boundary can go one unit either way.
TOL = {
    torch.float32: {"atol": 2e-6, "rtol": 1e-5},
    torch.float16: {"atol": 2e-3, "rtol": 2e-3},
    torch.bfloat16: {"atol": 1.6e-2, "rtol": 1.6e-2},
    torch.float64: {"atol": 1e-12, "rtol": 1e-12},
}

# Against a for-loop reference that rounds after every operation.
LOOP_TOL = {torch.float16: {"atol": 8e-3, "rtol": 8e-3}, torch.bfloat16: {"atol": 6e-2, "rtol": 6e-2}}


def make_params(dtype):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(s, generator=g).to(dtype) for s in SHAPES]


def make_grads(step, dtype):
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(s, generator=g).to(dtype) for s in SHAPES]


def run(opt_cls, device, dtype, lr=None, steps=STEPS, **kw):
    """Parameters and optimizer state after `steps` steps with fixed gradients."""
    params = [p.clone().to(device).requires_grad_() for p in make_params(dtype)]
    if lr is not None:
        kw["lr"] = lr(device) if callable(lr) else lr
    opt = opt_cls(params, **kw)
    for step in range(steps):
        for p, g in zip(params, make_grads(step, dtype), strict=True):
            p.grad = g.to(device)
        opt.step()
    state = []
    for p in params:
        for key in sorted(opt.state[p]):
            v = opt.state[p][key]
            if isinstance(v, torch.Tensor):
                state.append(v.detach().cpu())
    return [p.detach().cpu() for p in params], state


def check(opt_cls, dtype, reference=None, tol=None, **kw):
    """The optimizer on axon against the CPU; `reference` overrides keywords of the CPU run."""
    want_p, want_s = run(opt_cls, "cpu", dtype, **{**kw, **(reference or {})})
    got_p, got_s = run(opt_cls, DEVICE, dtype, **kw)
    assert len(got_s) == len(want_s)
    for got, want in zip(got_p + got_s, want_p + want_s, strict=True):
        torch.testing.assert_close(got, want, **(tol or TOL[want.dtype]) if want.is_floating_point() else {})


ADAM_FLAGS = list(itertools.product([False, True], [False, True], [0.0, 0.1]))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("amsgrad,maximize,weight_decay", ADAM_FLAGS)
@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW], ids=lambda c: c.__name__)
def test_adam(opt_cls, amsgrad, maximize, weight_decay, dtype, no_fallback):  # noqa: F811
    check(
        opt_cls,
        dtype,
        lr=1e-2,
        betas=(0.8, 0.99),
        amsgrad=amsgrad,
        maximize=maximize,
        weight_decay=weight_decay,
        fused=True,
    )


# (momentum, dampening, nesterov): no momentum buffer, plain, damped, Nesterov.
SGD_MOMENTA = [(0.0, 0.0, False), (0.9, 0.0, False), (0.9, 0.3, False), (0.9, 0.0, True)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
@pytest.mark.parametrize("momentum,dampening,nesterov", SGD_MOMENTA)
def test_sgd(momentum, dampening, nesterov, weight_decay, maximize, dtype, no_fallback):  # noqa: F811
    # PyTorch 2.13's CPU fused SGD is wrong for float16 / bfloat16 (its vectorised loop never
    # stores the parameters, and reads float16 momentum buffers as float): there the reference
    # is the CPU's for-loop SGD, which rounds after every operation where the fused step (axon's,
    # as CUDA's) rounds each stored value once, hence the wider tolerance.
    reduced = dtype != torch.float32
    check(
        torch.optim.SGD,
        dtype,
        lr=0.05,
        momentum=momentum,
        dampening=dampening,
        nesterov=nesterov,
        weight_decay=weight_decay,
        maximize=maximize,
        fused=True,
        reference={"fused": False, "foreach": False} if reduced else None,
        tol=LOOP_TOL.get(dtype) if reduced else None,
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("maximize", [False, True])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize("lr_decay,initial", [(0.0, 0.0), (0.01, 0.1)])
def test_adagrad(lr_decay, initial, weight_decay, maximize, dtype, no_fallback):  # noqa: F811
    check(
        torch.optim.Adagrad,
        dtype,
        lr=0.1,
        lr_decay=lr_decay,
        initial_accumulator_value=initial,
        weight_decay=weight_decay,
        maximize=maximize,
        fused=True,
    )


@pytest.mark.parametrize(
    "opt_cls,kw",
    [
        (torch.optim.Adam, {"amsgrad": True, "weight_decay": 0.1}),
        (torch.optim.AdamW, {"maximize": True, "weight_decay": 0.1}),
        (torch.optim.SGD, {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
        (torch.optim.Adagrad, {"lr_decay": 0.01, "weight_decay": 0.1}),
    ],
    ids=["Adam", "AdamW", "SGD", "Adagrad"],
)
def test_float64(opt_cls, kw, no_fallback):  # noqa: F811
    """float64 parameters (computed in double, element by element) where the device has it."""
    if not torch.axon.get_device_properties(0).has_fp64:
        pytest.skip("the device lacks cl_khr_fp64: float64 tensors cannot exist on it")
    check(opt_cls, torch.float64, lr=0.01, fused=True, **kw)


# A tensor learning rate: on the CPU (read on the host, as PyTorch's CUDA kernels do) or on the
# device (read by the kernel). The CPU reference always gets a CPU tensor.
def lr_on(where, value):
    return lambda device: torch.tensor(value, device=device if where == "device" else "cpu")


@pytest.mark.parametrize("where", ["cpu", "device"])
@pytest.mark.parametrize(
    "opt_cls,kw",
    [
        (torch.optim.Adam, {"amsgrad": True}),
        (torch.optim.AdamW, {"weight_decay": 0.1}),
        (torch.optim.SGD, {"momentum": 0.9, "nesterov": True}),
        (torch.optim.Adagrad, {"lr_decay": 0.01}),
    ],
    ids=["Adam", "AdamW", "SGD", "Adagrad"],
)
def test_tensor_lr(opt_cls, kw, where, no_fallback):  # noqa: F811
    check(opt_cls, torch.float32, lr=lr_on(where, 0.02), fused=True, **kw)


# ---- grad_scale and found_inf, through the ops themselves ------------------------------------


def op_lists(kind, device, dtype, amsgrad=True, as_dtype=None):
    """The list arguments of each fused op: params, grads, states..., step counts; values of
    `dtype`, held as `as_dtype` (default: dtype)."""
    g = torch.Generator().manual_seed(7)

    def rand(nonneg=False):
        out = []
        for s in SHAPES:
            t = torch.randn(s, generator=g)
            out.append((t.abs() if nonneg else t).to(dtype).to(as_dtype or dtype).to(device))
        return out

    params, grads = rand(), rand()
    steps = [torch.tensor(float(3 + i), device=device) for i in range(len(SHAPES))]
    if kind == "adam":
        return [params, grads, rand(), rand(nonneg=True), rand(nonneg=True) if amsgrad else [], steps]
    if kind == "sgd":
        return [params, grads, rand()]
    return [params, grads, rand(nonneg=True), steps]


OPS = {
    "adam": (
        torch._fused_adam_,
        dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.1, eps=1e-8, amsgrad=True, maximize=False),
    ),
    "adamw": (
        torch._fused_adamw_,
        dict(lr=0.01, beta1=0.9, beta2=0.99, weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=True),
    ),
    "sgd": (
        torch._fused_sgd_,
        dict(
            weight_decay=0.01, momentum=0.9, lr=0.1, dampening=0.1, nesterov=False, maximize=False, is_first_step=False
        ),
    ),
    "adagrad": (torch._fused_adagrad_, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, eps=1e-10, maximize=False)),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("found", [0.0, 1.0])
@pytest.mark.parametrize("name", list(OPS))
def test_grad_scale_found_inf(name, found, dtype, no_fallback):  # noqa: F811
    """grad_scale divides the gradients (written back unscaled); found_inf = 1 skips the step,
    leaving every tensor as it was, gradients included."""
    op, kw = OPS[name]
    kind = "adam" if name in ("adam", "adamw") else name
    # PyTorch 2.13's CPU fused SGD is wrong for float16 / bfloat16 (see test_sgd): the reference
    # there is the CPU op on float32 copies, rounded to the dtype at the end, which is what a
    # step computed in float and rounded once per stored value gives.
    ref_dtype = torch.float32 if name == "sgd" else dtype
    results = {}
    for device in ("cpu", DEVICE):
        held = ref_dtype if device == "cpu" else dtype
        lists = op_lists(kind, device, dtype, kw.get("amsgrad", True), as_dtype=held)
        before = [t.cpu().clone() for lst in lists for t in lst]
        scale = torch.tensor(1024.0, device=device)
        inf = torch.tensor(found, device=device)
        op(*lists, **kw, grad_scale=scale, found_inf=inf)
        after = [t.cpu() for lst in lists for t in lst]
        if found:
            for a, b in zip(after, before, strict=True):
                torch.testing.assert_close(a, b, rtol=0, atol=0)
        results[device] = [t.to(dtype) if t.dtype == held else t for t in after]
    for got, want in zip(results[DEVICE], results["cpu"], strict=True):
        torch.testing.assert_close(got, want, **TOL[want.dtype] if want.dtype in TOL else {})


def test_grad_scaler_training(no_fallback):  # noqa: F811
    """AdamW(fused=True) under torch.amp.GradScaler: the scaler hands the optimizer grad_scale
    and found_inf; a step with an infinite gradient is skipped on both devices alike."""
    results = {}
    for device in ("cpu", DEVICE):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)).to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, fused=True)
        scaler = torch.amp.GradScaler(device, init_scale=256.0)
        g = torch.Generator().manual_seed(1)
        for step in range(4):
            x = torch.randn(32, 8, generator=g).to(device)
            loss = model(x).square().mean()
            if step == 2:
                loss = loss * float("inf")
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        results[device] = [p.detach().cpu() for p in model.parameters()] + [torch.tensor(scaler.get_scale())]
    for got, want in zip(results[DEVICE], results["cpu"], strict=True):
        torch.testing.assert_close(got, want, **TOL[torch.float32])


def test_fused_ops_are_native():
    """The fused ops never reach the CPU fallback, whatever the optimizer."""
    torch.axon.fallback_ops(reset=True)
    for opt_cls in (torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD, torch.optim.Adagrad):
        kw = {"momentum": 0.9} if opt_cls is torch.optim.SGD else {}
        run(opt_cls, DEVICE, torch.float32, steps=2, lr=0.01, fused=True, **kw)
    used = torch.axon.fallback_ops(reset=True)
    assert not [op for op in used if "_fused_" in op], used
    assert not used, used


@pytest.mark.parametrize(
    "opt_cls,kw",
    [
        (torch.optim.Adam, {"amsgrad": True}),
        (torch.optim.AdamW, {"weight_decay": 0.1}),
        (torch.optim.SGD, {"momentum": 0.9, "nesterov": True}),
        (torch.optim.Adagrad, {"lr_decay": 0.01}),
    ],
    ids=["Adam", "AdamW", "SGD", "Adagrad"],
)
def test_foreach_stays_native(opt_cls, kw, no_fallback):  # noqa: F811
    """foreach=True runs on native ops and matches the CPU's foreach step."""
    check(opt_cls, torch.float32, lr=0.01, foreach=True, **kw)


@pytest.mark.parametrize("opt_cls", [torch.optim.AdamW, torch.optim.SGD], ids=lambda c: c.__name__)
def test_mixed_layouts(opt_cls, no_fallback):  # noqa: F811
    """A transposed parameter whose gradient is contiguous, and a parameter that is a strided
    view: the fused step pairs elements by position in the tensor, not in memory. The reference is
    the CPU's for-loop step (its fused kernels assume one layout)."""
    kw = {"lr": 0.01, "momentum": 0.9} if opt_cls is torch.optim.SGD else {"lr": 0.01}
    results = {}
    for device, form in (("cpu", {"foreach": False}), (DEVICE, {"fused": True})):
        g = torch.Generator().manual_seed(3)
        base = torch.randn(12, 10, generator=g)
        params = [
            base.t().contiguous().t().to(device).detach().requires_grad_(),  # transposed storage
            torch.randn(8, 6, generator=g)[:, ::2].to(device).detach().requires_grad_(),  # strided view
        ]
        opt = opt_cls(params, **kw, **form)
        for step in range(3):
            gg = torch.Generator().manual_seed(10 + step)
            for p in params:
                p.grad = torch.randn(p.shape, generator=gg).to(device)  # contiguous
            opt.step()
        results[device] = [p.detach().cpu() for p in params]
    for got, want in zip(results[DEVICE], results["cpu"], strict=True):
        torch.testing.assert_close(got, want, **TOL[torch.float32])


@pytest.mark.parametrize("form", ["fused", "foreach", "for-loop"])
def test_bench_optimizer_rows_agree(form, no_fallback):  # noqa: F811
    """The benchmark's optimizer-step rows (torch_axon/tools/bench/optim.py, quick shapes) do the
    same work on both backends: one step leaves the same parameters."""
    from torch_axon.tools.bench import optim

    steps = {device: optim._make(form, device, quick=True) for device in ("cpu", DEVICE)}
    for step in steps.values():
        step()
    params = {d: [p.detach().cpu() for p in s.__self__.param_groups[0]["params"]] for d, s in steps.items()}
    assert len(params["cpu"]) == len(optim.shapes(True)) > 10
    for got, want in zip(params[DEVICE], params["cpu"], strict=True):
        torch.testing.assert_close(got, want, **TOL[torch.float32])
