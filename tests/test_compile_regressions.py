"""Programs that torch.compile on axon once failed to compile where CPU Inductor compiled them,
each compared with the same program eager on the CPU (outputs and input gradients).

On devices other than the CPU Inductor lowers ``torch.cat`` pointwise: each piece is loaded at
``Identity(i - offset)``. A piece that indexes through ``Min`` / ``Max`` (a replicate pad, a
clamp) then stopped the compiler with "The argument '((-32)) - 1' is not comparable" (or
'-((0))'), once numbers were substituted for the indices (torch_axon/inductor/sympy_fixes.py,
and the stride analysis of kernel.py).
"""

from __future__ import annotations

import pytest
import sympy
import torch
import torch.nn.functional as F
from torch._inductor.utils import run_and_get_code

from torch_axon.inductor import register


def _replicate_pad(x: torch.Tensor) -> torch.Tensor:
    return F.pad(x[None], (1, 1), mode="replicate")[0]


PROGRAMS = {
    # cat of a plain piece and a padded one, pointwise and reduced
    "cat-pad": lambda a, b: torch.cat([a, _replicate_pad(b)], -1) * 2,
    "cat-pad-sum": lambda a, b: torch.cat([a, _replicate_pad(b)], -1).sum(-1),
    # the padded piece first (offset 0) and reversed: a negated index inside the clamp
    "cat-flip-pad": lambda a, b: torch.cat([_replicate_pad(b.flip(-1)), a], -1).square(),
    # a clamped gather of a cat, then a row reduction
    "cat-clamp-gather": lambda a, b: torch.cat([a, b], -1)[:, (torch.arange(64) - 3).clamp(0, 61)].softmax(-1),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_cat_of_clamped_pieces_compiles_and_matches(name):
    fn = PROGRAMS[name]
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(4, 32, generator=g), torch.randn(4, 30, generator=g)
    torch._dynamo.reset()
    cpu_inputs = [t.clone().requires_grad_() for t in (a, b)]
    axon_inputs = [t.to("axon").requires_grad_() for t in (a, b)]
    expected = fn(*cpu_inputs)
    got = torch.compile(fn)(*axon_inputs)
    torch.testing.assert_close(got.cpu(), expected.detach())
    weight = torch.randn(expected.shape, generator=g)
    (expected * weight).sum().backward()
    (got * weight.to("axon")).sum().backward()
    for c, x in zip(cpu_inputs, axon_inputs, strict=True):
        torch.testing.assert_close(x.grad.cpu(), c.grad)


def test_identity_of_a_number_is_ordered_inside_min_and_max():
    """The sympy side of the fix: Min / Max of sums of Identity and numbers (they raised
    ValueError) evaluate to the numbers they stand for."""
    from torch.utils._sympy.functions import Identity, Max, Min

    register()
    zero, n = sympy.Integer(0), sympy.Integer(-32)
    assert Max(-Identity(zero), 0) == 0
    assert Max(-1 + Identity(sympy.Integer(1)), 0) == 0
    assert Max(Identity(n) - 1, 0) == 0
    assert Min(Identity(n) - 1, 0) == -33
    x = sympy.Symbol("x", integer=True)
    assert isinstance(Identity(x - 4), Identity)  # a symbolic one still keeps its argument whole


def test_tensor_assert_compiles_and_matches():
    """``assert`` on a tensor (I-BERT's check for NaN) becomes ``_assert_async``, which the
    kernel generator refused ("device_assert_async should be handled by CSEProxy"). It compiles
    now, unchecked on the device (as Triton's outside debug mode), and the results match."""

    def fn(x):
        assert x.isnan().sum() == 0, "NaN in x"
        return x.abs().amax(-1)

    x = torch.randn(4, 16, generator=torch.Generator().manual_seed(0))
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(fn)(x.to("axon")).cpu(), fn(x))


VIEW_OF_A_MATMUL = """
import json, sys, torch, torch_axon
from torch_axon.inductor import view_meta_cache

def f(x, w):
    y = x @ w  # three-dimensional: the product is an _unsafe_view of mm's result
    return y.relu(), y.transpose(1, 2), y[0]  # outputs that are views of it

torch.manual_seed(0)
x, w = torch.randn(2, 3, 4), torch.randn(4, 5)
expected = f(x, w)
xa, wa = x.to("axon").requires_grad_(), w.to("axon").requires_grad_()
out = torch.compile(f)(xa, wa)
sum(o.sum() for o in out).backward()
errors = [(o.cpu() - e).abs().max().item() for o, e in zip(out, expected)]
print(json.dumps({"errors": errors, "skipped": view_meta_cache.skipped}))
"""


def test_a_view_of_a_matmul_output_compiles_alike_in_the_next_process(tmp_path):
    """torch 2.13 pickles an ``_unsafe_view`` record into AOTAutograd's cache from freed memory:
    the next process replayed the view with garbage sizes, or the save crashed. Such entries are
    not saved (view_meta_cache.py): every process compiles, and each gets the CPU's values."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    skipped = []
    for _ in range(2):  # cold, then with what the first process left in the cache
        run = subprocess.run([sys.executable, "-c", VIEW_OF_A_MATMUL], env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-3000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
        assert max(result["errors"]) < 1e-5, result
        skipped.append(result["skipped"])
    assert min(skipped) >= 1, skipped  # each process compiled: the guard kept the entry out


# (pool, input shape, keywords): the windows overhang in ceil mode in the first four
POOLS = {
    "2d-kernel-past-input": (F.avg_pool2d, (2, 3, 4, 4), dict(kernel_size=16, ceil_mode=True)),
    "2d-last-window-overhangs": (F.avg_pool2d, (1, 2, 6, 8), dict(kernel_size=3, stride=2, ceil_mode=True)),
    "2d-overhang-with-padding": (F.avg_pool2d, (1, 2, 6, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    "1d-last-window-overhangs": (F.avg_pool1d, (2, 3, 6), dict(kernel_size=3, stride=2, ceil_mode=True)),
    "3d-last-window-overhangs": (F.avg_pool3d, (1, 2, 3, 5, 5), dict(kernel_size=2, stride=2, ceil_mode=True)),
    "2d-overhang-pad-excluded": (
        F.avg_pool2d,
        (1, 2, 5, 5),
        dict(kernel_size=2, stride=2, ceil_mode=True, count_include_pad=False),
    ),
    "2d-overhang-divisor": (
        F.avg_pool2d,
        (1, 2, 5, 5),
        dict(kernel_size=2, stride=2, ceil_mode=True, divisor_override=3),
    ),
    "2d-ceil-mode-no-overhang": (F.avg_pool2d, (1, 2, 6, 6), dict(kernel_size=2, stride=2, ceil_mode=True)),
}


@pytest.mark.parametrize("name", POOLS)
def test_average_pooling_gradient_in_ceil_mode_divides_as_its_forward(name):
    """Inductor's avg_pool2d/3d backward lowerings divided the gradient of a window that ceil
    mode lets overhang by the whole kernel, where the forward divides by the part inside the
    padded input (pool_backward.py; EfficientNet's gradients came out 1280² times too small).
    Compiled on axon, each case's gradient equals the CPU's eager one, and runs on axon."""
    pool, shape, keywords = POOLS[name]
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    weight = torch.randn(pool(x, **keywords).shape, generator=torch.Generator().manual_seed(1))

    def fn(t, w):
        return (pool(t, **keywords) * w).sum()

    cpu = x.clone().requires_grad_()
    fn(cpu, weight).backward()
    torch._dynamo.reset()
    torch.axon.fallback_ops(reset=True)
    on_axon = x.to("axon").requires_grad_()
    torch.compile(fn)(on_axon, weight.to("axon")).backward()
    torch.testing.assert_close(on_axon.grad.cpu(), cpu.grad)
    assert torch.axon.fallback_ops(reset=True) == {}


SPECIAL_PROGRAMS = {
    # float64 alone: the kernel includes special.cl in double, as the eager float64 kernels
    "float64": lambda x, y: torch.lgamma(x) + torch.digamma(x) * torch.special.i0e(x) + torch.special.erfinv(x / 31),
    # float64 and float32 special functions fused in one kernel (both read x): both computed in double
    "float64-and-float32": lambda x, y: (
        torch.special.ndtri(x.sigmoid()),
        torch.special.erfcx(x.float()) * torch.lgamma(y),
    ),
}


@pytest.mark.parametrize("name", SPECIAL_PROGRAMS)
def test_float64_special_functions_compile_and_match(name):
    """Compiled float64 special functions were refused ("compiled kernels compute special
    functions in float32 only so far"), where CPU Inductor compiles them. They compute in double
    now, as the eager float64 kernels do, and agree with eager CPU; no op runs on the CPU."""
    x = torch.linspace(-4.5, 30, 257, dtype=torch.float64)
    y = torch.linspace(0.1, 9, 257, dtype=torch.float32)
    fn = SPECIAL_PROGRAMS[name]
    expected = fn(x, y)
    torch._dynamo.reset()
    torch.axon.fallback_ops(reset=True)
    got, (source,) = run_and_get_code(torch.compile(fn), x.to("axon"), y.to("axon"))
    assert torch.axon.fallback_ops(reset=True) == {}
    # one kernel, with special.cl's float64 instance
    assert source.count("__kernel void") == 1 and "typedef double CT" in source, source
    for g, e in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, expected)), strict=True):
        assert g.dtype == e.dtype
        torch.testing.assert_close(g.cpu(), e, equal_nan=True)


@pytest.mark.parametrize("channels", [32, 192])
def test_outlook_fold_after_a_permute_compiles_and_matches(channels):
    """timm's VOLO ends its outlook attention with ``F.fold`` of ``attn @ v`` permuted. PyTorch's
    CPU Inductor miscompiles that fold (scripts/upstream/inductor_cpu_fold.py: the atomic adds
    of its vectorized col2im go to the wrong channels and past the buffer, and glibc aborts).
    Axon takes the same lowering, a scatter-add, with its own code generator: compiled on axon,
    forward and gradient equal the CPU's eager ones, with no op on the CPU."""
    batch, heads, side, k, stride, pad = 2, 2, 8, 3, 2, 1
    cells = (side // stride) ** 2

    def outlook_fold(y):
        x = y.permute(0, 1, 4, 3, 2).reshape(batch, channels * k * k, cells)
        return F.fold(x, output_size=(side, side), kernel_size=k, padding=pad, stride=stride).permute(0, 2, 3, 1)

    g = torch.Generator().manual_seed(0)
    y = torch.randn(batch, heads, cells, k * k, channels // heads, generator=g)
    cpu = y.clone().requires_grad_()
    expected = outlook_fold(cpu)
    weight = torch.randn(expected.shape, generator=g)
    (expected * weight).sum().backward()
    torch._dynamo.reset()
    torch.axon.fallback_ops(reset=True)
    on_axon = y.to("axon").requires_grad_()
    got = torch.compile(outlook_fold)(on_axon)
    (got * weight.to("axon")).sum().backward()
    assert torch.axon.fallback_ops(reset=True) == {}
    torch.testing.assert_close(got.detach().cpu(), expected.detach())
    torch.testing.assert_close(on_axon.grad.cpu(), cpu.grad)


CLASS_TOKEN_PROGRAMS = {
    # VOLO's class token: expanded over the batch, put before the tokens, then its own slice plus
    # a sum over all tokens (what attention and layer norm make of it)
    "expand": lambda token, x: (lambda t: t[:, :1] + t.sum(1, keepdim=True))(
        torch.cat([token.expand(x.shape[0], -1, -1), x], 1)
    ),
    "repeat": lambda token, x: (lambda t: t[:, :1] + t.sum(1, keepdim=True))(
        torch.cat([token.repeat(x.shape[0], 1, 1), x], 1)
    ),
}


@pytest.mark.parametrize("name", CLASS_TOKEN_PROGRAMS)
def test_a_masked_term_of_an_unrolled_reduction_is_its_own(name):
    """The gradient of a token expanded over a batch of 2 sums two terms, which Inductor unrolls
    into one pointwise kernel, each term a slice's backward: a masked load of its own element.
    Those loads were made before, outside the mask, so both masked bodies wrote no code, and the
    code generator's cache of masked values gave the second term the first's value (timm's
    volo_d1_224 trained with a class-token gradient 1.1 off, float64 alike). Compiled on axon,
    the gradient now equals eager CPU's."""
    fn = CLASS_TOKEN_PROGRAMS[name]
    g = torch.Generator().manual_seed(0)
    token, x = torch.randn(1, 1, 8, generator=g), torch.randn(2, 16, 8, generator=g)
    cpu = token.clone().requires_grad_()
    (fn(cpu, x) ** 2).sum().backward()
    torch._dynamo.reset()
    on_axon = token.to("axon").requires_grad_()
    (torch.compile(fn)(on_axon, x.to("axon")) ** 2).sum().backward()
    torch.testing.assert_close(on_axon.grad.cpu(), cpu.grad)
