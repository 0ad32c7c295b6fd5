"""A user elementwise kernel inside compiled kernels (torch_axon/inductor/user_kernels.py): on axon
the op lowers to a call of its OpenCL C function that fuses with the pointwise ops around it, one
generated kernel, and the op itself is not called; elsewhere Inductor calls the op as before.

The op here is a stand-in for a user kernel: its axon implementation is plain torch ops, its C
function the same arithmetic, as ElementwiseKernel("T x, T y", "T z", "z = x * y + 1;") gives.
Its tag `flexible_layout` lets Inductor hand it any layout (an elementwise kernel takes any):
without it Inductor fixes its inputs' strides first, which stores a computed input in a buffer
of its own (an extra kernel where the input is broadcast).
"""

from __future__ import annotations

import pytest
import torch
from conftest import tol
from torch._inductor.utils import fresh_cache, run_and_get_code

from torch_axon.inductor import user_kernels

eager_calls = {"axon": 0, "cpu": 0}


@torch.library.custom_op("scratch::myop", mutates_args=(), device_types="axon", tags=torch.Tag.flexible_layout)
def myop(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    eager_calls["axon"] += 1
    return x * y + 1


@myop.register_kernel("cpu")
def _(x, y):
    eager_calls["cpu"] += 1
    return x * y + 1


@myop.register_fake
def _(x, y):
    device = x.device if x.device.type != "cpu" else y.device  # a number comes as a 0-dim CPU tensor
    return torch.empty(torch.broadcast_shapes(x.shape, y.shape), dtype=x.dtype, device=device)


def c_function(ctype: str) -> tuple[str, str]:
    name = f"scratch_myop_{ctype}"
    return name, f"inline {ctype} {name}({ctype} x, {ctype} y) {{ {ctype} z; z = x * y + 1; return z; }}"


user_kernels.register_fusible(myop._opoverload, c_function)
# Registering axon with Inductor installs pending ops (torch_axon.inductor.register); the test does
# not depend on that, nor on which test compiles first.
user_kernels.install_pending()


def _compiled(fn, *args):
    torch._dynamo.reset()
    before = dict(eager_calls)
    with fresh_cache():  # a cached graph would skip the lowering: the graph names the op only
        got, codes = run_and_get_code(torch.compile(fn), *args)
    return got, "\n".join(codes), {k: eager_calls[k] - before[k] for k in eager_calls}


def _kernels(code: str) -> int:
    return code.count("= AxonKernel(")


@pytest.mark.parametrize("dtype,ctype", [(torch.float32, "float"), (torch.float16, "float"), (torch.int32, "int")])
def test_fuses_with_the_ops_around_it(dtype, ctype):
    x, y = (torch.randn(1000) * 10).to(dtype), (torch.randn(1000) * 10).to(dtype)
    got, code, calls = _compiled(lambda a, b: torch.relu(myop(a, b) * 2), x.to("axon"), y.to("axon"))
    assert _kernels(code) == 1, code
    assert calls == {"axon": 0, "cpu": 0} and "scratch.myop" not in code, code
    # float16 computes in float, as Inductor keeps its values, and is rounded once when stored
    assert code.count(f"inline {ctype} scratch_myop_{ctype}(") == 1, code
    compute = torch.float32 if dtype == torch.float16 else dtype
    expected = torch.relu((x.to(compute) * y.to(compute) + 1) * 2).to(dtype)
    torch.testing.assert_close(got.cpu(), expected, **tol(dtype))


def test_broadcast_inputs_and_a_fused_producer():
    x, y = torch.randn(33, 1), torch.randn(1, 47)
    fn = lambda a, b: torch.relu(myop(a + 1, b) * 2)  # noqa: E731
    got, code, calls = _compiled(fn, x.to("axon"), y.to("axon"))
    assert _kernels(code) == 1 and calls["axon"] == 0, code
    torch.testing.assert_close(got.cpu(), torch.relu(((x + 1) * y + 1) * 2), **tol(torch.float32))


def test_a_number_as_a_0_dim_cpu_tensor():
    # as ElementwiseKernel passes numbers; a 0-dim CPU tensor given as a graph input is not
    # loadable by compiled axon kernels yet, built-in ops' kernels included
    x = torch.randn(300)
    fn = lambda a: torch.relu(myop(a, torch.tensor(-2.0)) * 2)  # noqa: E731
    got, code, calls = _compiled(fn, x.to("axon"))
    assert _kernels(code) == 1 and calls["axon"] == 0 and "scratch.myop" not in code, code
    torch.testing.assert_close(got.cpu(), torch.relu((x * -2 + 1) * 2), **tol(torch.float32))


def test_two_calls_share_one_definition():
    x, y = torch.randn(257), torch.randn(257)
    got, code, _ = _compiled(lambda a, b: myop(myop(a, b), b).sigmoid(), x.to("axon"), y.to("axon"))
    assert _kernels(code) == 1 and code.count("inline float scratch_myop_float(") == 1, code
    torch.testing.assert_close(got.cpu(), ((x * y + 1) * y + 1).sigmoid(), **tol(torch.float32))


def test_eager_runs_the_op():
    x, y = torch.randn(100), torch.randn(100)
    before = eager_calls["axon"]
    got = myop(x.to("axon"), y.to("axon"))
    assert eager_calls["axon"] == before + 1
    torch.testing.assert_close(got.cpu(), x * y + 1, **tol(torch.float32))


def test_cpu_keeps_calling_the_op():
    x, y = torch.randn(100), torch.randn(100)
    got, code, calls = _compiled(lambda a, b: torch.relu(myop(a, b) * 2), x, y)
    assert calls["cpu"] == 1 and "scratch.myop" in code and "scratch_myop_float" not in code, code
    torch.testing.assert_close(got, torch.relu((x * y + 1) * 2), **tol(torch.float32))


def test_elementwise_kernel_fuses_under_compile():
    """The public API: an ElementwiseKernel in a compiled function is one generated kernel with
    the ops around it, fullgraph, and no CPU fallback."""
    from torch_axon.kernels import ElementwiseKernel

    scaled = ElementwiseKernel("T x, T y", "T z", "z = x * y + 0.5f;", "test_fused_scaled")
    x, y = torch.randn(4, 257), torch.randn(257)
    torch.axon.fallback_ops(reset=True)
    torch._dynamo.reset()
    with fresh_cache():
        got, codes = run_and_get_code(
            torch.compile(lambda a, b: torch.relu(scaled(a, b) * 2), fullgraph=True), x.to("axon"), y.to("axon")
        )
    code = "\n".join(codes)
    assert _kernels(code) == 1 and "axon_user_test_fused_scaled_float" in code, code
    assert not torch.axon.fallback_ops()
    torch.testing.assert_close(got.cpu(), torch.relu((x * y + 0.5) * 2), **tol(torch.float32))


def test_elementwise_kernel_runs_on_float8_in_compiled_kernels():
    """A float32 body that compiles on vectors runs eight lanes at a time in a flat compiled
    kernel, as built-in ops' kernels do (vectorize.py); a body with an `if` keeps scalar lanes."""
    from torch_axon.kernels import ElementwiseKernel

    smooth = ElementwiseKernel("T x", "T y", "y = tanh(x) * 0.5f;", "test_vec_smooth")
    branchy = ElementwiseKernel("T x", "T y", "if (x > 0) y = x; else y = tanh(x);", "test_vec_branchy")
    x = torch.randn(4096)
    for kernel, vectorised, expected in (
        (smooth, True, torch.tanh(x) * 0.5),
        (branchy, False, torch.where(x > 0, x, torch.tanh(x))),
    ):
        torch._dynamo.reset()
        with fresh_cache():
            got, codes = run_and_get_code(torch.compile(lambda a, k=kernel: k(a) * 2 + 1), x.to("axon"))
        code = "\n".join(codes)
        assert _kernels(code) == 1, code
        assert (f"axon_user_{kernel.name}_float8(" in code and "vload8" in code) == vectorised, code
        torch.testing.assert_close(got.cpu(), expected * 2 + 1, **tol(torch.float32))
