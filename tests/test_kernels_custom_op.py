"""Issue 23 section 3: a kernel written with torch.axon.compile_shader, registered through
PyTorch's own torch.library API (custom_op with device_types="axon", register_fake,
register_autograd, register_autocast, register_vmap), in eager mode, under autograd, under
torch.compile (one node, no graph break, no CPU fallback), with dynamic shapes, autocast and vmap.

The op is a soft cap, cap * tanh(x / cap) (the logit capping of Gemma-style models)."""

import pytest
import torch

import torch_axon  # noqa: F401

SOURCE = """
__kernel void softcap_forward(__global const T *x, __global T *y, T cap, long n) {
    long i = get_global_id(0);
    if (i < n) y[i] = cap * tanh(x[i] / cap);
}
__kernel void softcap_backward(__global const T *grad, __global const T *y, __global T *dx, T cap, long n) {
    long i = get_global_id(0);
    if (i < n) { T t = y[i] / cap; dx[i] = grad[i] * (1 - t * t); }
}
"""
_TYPES = {torch.float32: "float", torch.float64: "double"}
_libraries: dict = {}
calls = {"forward": 0}


def _lib(dtype: torch.dtype):
    if dtype not in _libraries:
        _libraries[dtype] = torch.axon.compile_shader(SOURCE, options=f"-DT={_TYPES[dtype]}")
    return _libraries[dtype]


@torch.library.custom_op("axon_test::softcap", mutates_args=(), device_types="axon")
def softcap(x: torch.Tensor, cap: float) -> torch.Tensor:
    calls["forward"] += 1
    x = x.contiguous()
    y = torch.empty_like(x)
    _lib(x.dtype).softcap_forward(x, y, cap, x.numel(), threads=max(x.numel(), 1))
    return y


@softcap.register_fake
def _(x, cap):
    return torch.empty_like(x)


@torch.library.custom_op("axon_test::softcap_backward", mutates_args=(), device_types="axon")
def softcap_backward(grad: torch.Tensor, y: torch.Tensor, cap: float) -> torch.Tensor:
    grad, y = grad.contiguous(), y.contiguous()
    dx = torch.empty_like(y)
    _lib(y.dtype).softcap_backward(grad, y, dx, cap, y.numel(), threads=max(y.numel(), 1))
    return dx


@softcap_backward.register_fake
def _(grad, y, cap):
    return torch.empty_like(y)


def _setup(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.cap = inputs[1]


def _backward(ctx, grad):
    (y,) = ctx.saved_tensors
    return softcap_backward(grad, y, ctx.cap), None


softcap.register_autograd(_backward, setup_context=_setup)
# Under autocast the soft cap computes in float32, as PyTorch's own tanh-like ops do.
torch.library.register_autocast("axon_test::softcap", "axon", torch.float32)


@softcap.register_vmap
def _(info, in_dims, x, cap):
    # Elementwise: the batch dimension needs no handling beyond passing it through.
    return softcap(x, cap), in_dims[0]


def reference(x, cap):
    return cap * torch.tanh(x / cap)


def test_eager_matches_cpu():
    x = torch.randn(3, 1001) * 40
    torch.testing.assert_close(softcap(x.to("axon"), 30.0).cpu(), reference(x, 30.0))


def test_gradcheck_float64_on_axon():
    x = (torch.randn(37, dtype=torch.float64) * 20).to("axon").requires_grad_()
    assert torch.autograd.gradcheck(lambda t: softcap(t, 15.0), (x,))


def test_compile_fullgraph_one_node_no_fallback():
    from torch._inductor.utils import run_and_get_code

    x = (torch.randn(64, 65) * 40).to("axon").requires_grad_()
    torch.axon.fallback_ops(reset=True)
    torch._dynamo.reset()

    def step(t):
        return (softcap(t * 2, 30.0) + 1).sum()

    loss, codes = run_and_get_code(torch.compile(step, fullgraph=True), x)
    loss.backward()
    assert "axon_test.softcap.default" in "\n".join(codes)  # called as one node
    assert not torch.axon.fallback_ops()
    expected = x.detach().cpu().requires_grad_()
    expected_loss = (reference(expected * 2, 30.0) + 1).sum()
    expected_loss.backward()
    torch.testing.assert_close(loss.detach().cpu(), expected_loss.detach(), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(x.grad.cpu(), expected.grad)


def test_dynamic_shapes_compile_once():
    torch._dynamo.reset()
    frames = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    compiled = torch.compile(lambda t: softcap(t, 10.0) * 3, dynamic=True, fullgraph=True)
    for n in (100, 257, 1000):
        x = torch.randn(n) * 20
        torch.testing.assert_close(compiled(x.to("axon")).cpu(), reference(x, 10.0) * 3)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] - frames == 1


def test_autocast_runs_it_in_float32():
    x = (torch.randn(500) * 20).to("axon")
    with torch.autocast("axon", dtype=torch.float16):
        y = softcap(x.half(), 10.0)
    assert y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), reference(x.half().float().cpu(), 10.0))


def test_vmap_with_the_batching_rule():
    x = torch.randn(4, 33) * 20
    got = torch.vmap(lambda row: softcap(row, 5.0))(x.to("axon"))
    torch.testing.assert_close(got.cpu(), reference(x, 5.0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_backward_matches_cpu_autograd(dtype):
    x = torch.randn(300, dtype=dtype) * 20
    xa = x.to("axon").requires_grad_()
    softcap(xa, 12.0).pow(2).sum().backward()
    xc = x.clone().requires_grad_()
    reference(xc, 12.0).pow(2).sum().backward()
    torch.testing.assert_close(xa.grad.cpu(), xc.grad)
