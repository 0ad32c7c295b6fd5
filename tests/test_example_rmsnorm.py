"""examples/fused_rmsnorm.py: the fused add+RMSNorm custom op against PyTorch's CPU composition,
in eager mode, under autograd, gradcheck and torch.compile, and in a Llama block trained both ways."""

from __future__ import annotations

import pathlib
import sys

import pytest
import torch
from conftest import compare

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import fused_rmsnorm as ex  # noqa: E402

# Every test, compiled ones included, runs natively: nothing through Axon's CPU fallback.
pytestmark = pytest.mark.usefixtures("no_fallback")

EPS = 1e-6
# Row length 100 and 13 leave a tail past the last 8-element chunk; on the default device 70
# rows give the backward several rows per work-group, so grad_weight sums partial rows.
SHAPES = [(4, 64), (3, 5, 100), (7, 13), (70, 24), (2, 1030)]


def inputs(shape, dtype=torch.float32, requires_grad=False):
    """(cpu, axon) lists of x, residual, weight with equal values."""
    cpu = [torch.randn(shape, dtype=dtype), torch.randn(shape, dtype=dtype), torch.rand(shape[-1], dtype=dtype) + 0.5]
    ax = [t.to("axon") for t in cpu]
    for t in cpu + ax:
        t.requires_grad_(requires_grad)
    return cpu, ax


@pytest.mark.parametrize("shape", SHAPES)
def test_forward_matches_cpu(shape):
    cpu, ax = inputs(shape)
    compare(ex.reference_add_rmsnorm(*cpu, EPS), ex.fused_add_rmsnorm(*ax, EPS), atol=1e-5, rtol=1e-5)


def test_forward_non_contiguous_inputs():
    cpu, ax = inputs((24, 40))
    cpu[0], ax[0] = cpu[0].t().contiguous().t(), ax[0].t().contiguous().t()
    assert not ax[0].is_contiguous()
    compare(ex.reference_add_rmsnorm(*cpu, EPS), ex.fused_add_rmsnorm(*ax, EPS), atol=1e-5, rtol=1e-5)


def backward_both(fn, x, residual, weight, gy, gh):
    """Gradients of <y, gy> + <h, gh>: the gradient reaches h through y and directly."""
    y, h = fn(x, residual, weight, EPS)
    ((y * gy).sum() + (h * gh).sum()).backward()
    return x.grad, residual.grad, weight.grad


@pytest.mark.parametrize("shape", SHAPES)
def test_backward_matches_cpu(shape):
    cpu, ax = inputs(shape, requires_grad=True)
    gy, gh = torch.randn(shape), torch.randn(shape)
    want = backward_both(ex.reference_add_rmsnorm, *cpu, gy, gh)
    got = backward_both(ex.fused_add_rmsnorm, *ax, gy.to("axon"), gh.to("axon"))
    compare(want, got, atol=1e-4, rtol=1e-4)


def test_backward_through_y_only():
    cpu, ax = inputs((6, 20), requires_grad=True)
    ex.reference_add_rmsnorm(*cpu, EPS)[0].square().sum().backward()
    ex.fused_add_rmsnorm(*ax, EPS)[0].square().sum().backward()
    compare([t.grad for t in cpu], [t.grad for t in ax], atol=1e-4, rtol=1e-4)


def test_backward_through_h_only():
    cpu, ax = inputs((6, 20), requires_grad=True)
    ex.reference_add_rmsnorm(*cpu, EPS)[1].square().sum().backward()
    ex.fused_add_rmsnorm(*ax, EPS)[1].square().sum().backward()
    compare([t.grad for t in cpu[:2]], [t.grad for t in ax[:2]])
    assert cpu[2].grad is None and ax[2].grad is None


@pytest.mark.parametrize("group", [32, 256])
def test_gpu_layout_matches_cpu(monkeypatch, group):
    """The layout GPUs get (a work-group shares each row and reduces in __local memory), run
    on whatever the device is: rows of fewer chunks than work-items, and with a tail."""

    def layout(device_index, rows, n):
        return group, 3, -(-rows // 3)

    monkeypatch.setattr(ex, "_launch_layout", layout)
    for shape in [(7, 13), (10, 1030)]:
        cpu, ax = inputs(shape, requires_grad=True)
        gy, gh = torch.randn(shape), torch.randn(shape)
        compare(ex.reference_add_rmsnorm(*cpu, EPS), ex.fused_add_rmsnorm(*ax, EPS), atol=1e-5, rtol=1e-5)
        want = backward_both(ex.reference_add_rmsnorm, *cpu, gy, gh)
        got = backward_both(ex.fused_add_rmsnorm, *ax, gy.to("axon"), gh.to("axon"))
        compare(want, got, atol=1e-4, rtol=1e-4)


def test_gradcheck_float64():
    _, ax = inputs((2, 3, 12), torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, r, w: ex.fused_add_rmsnorm(x, r, w, EPS), ax)


def test_rejects_unsupported_dtype():
    x = torch.randn(2, 8, device="axon", dtype=torch.float16)
    with pytest.raises(TypeError, match="float32 and float64"):
        ex.fused_add_rmsnorm(x, x, torch.ones(8, device="axon", dtype=torch.float16))


def surrounded(x, residual, weight):
    """The op between built-in ops, as a model uses it."""
    y, h = ex.fused_add_rmsnorm(x * 2, residual, weight, EPS)
    return torch.relu(y) + h.sin()


def reference_surrounded(x, residual, weight):
    y, h = ex.reference_add_rmsnorm(x * 2, residual, weight, EPS)
    return torch.relu(y) + h.sin()


def test_compile_one_graph():
    cpu, ax = inputs((5, 48))
    explained = torch._dynamo.explain(surrounded)(*ax)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    targets = [node.target for node in explained.graphs[0].graph.nodes]
    assert torch.ops.axon_examples.fused_add_rmsnorm.default in targets
    torch._dynamo.reset()
    got = torch.compile(surrounded, fullgraph=True)(*ax)
    compare(reference_surrounded(*cpu), got)


def test_compile_backward():
    cpu, ax = inputs((9, 40), requires_grad=True)
    reference_surrounded(*cpu).sum().backward()
    torch.compile(surrounded, fullgraph=True)(*ax).sum().backward()
    compare([t.grad for t in cpu], [t.grad for t in ax], atol=1e-4, rtol=1e-4)


def test_compile_dynamic_rows():
    from torch._dynamo.testing import CompileCounterWithBackend

    counter = CompileCounterWithBackend("inductor")
    fn = torch.compile(surrounded, backend=counter, dynamic=True, fullgraph=True)
    for rows in (5, 11):
        cpu, ax = inputs((rows, 24))
        compare(reference_surrounded(*cpu), fn(*ax), atol=1e-5, rtol=1e-5)
    # Dynamo restarts its first analysis once to specialise the float eps (an empty graph
    # reaches the backend); a recompile for the second row count would add a second real one.
    graphs = [g for g in counter.graphs if any(n.op == "call_function" for n in g.graph.nodes)]
    assert len(graphs) == 1, f"{len(graphs)} graphs compiled for two row counts"


def test_llama_training_matches_unfused():
    """Three SGD steps of a one-layer Llama: fused eager and fused compiled against the unfused
    composition, with the same initial parameters and tokens."""
    torch.manual_seed(0)
    config = dict(vocab=64, dim=32, heads=2, hidden=64, layers=1)
    tokens = torch.randint(64, (2, 17), device="axon")
    base = ex.TinyLlama(fused=False, **config).to("axon")
    models = {"unfused": base}
    for name in ("fused", "compiled"):
        models[name] = ex.TinyLlama(fused=True, **config).to("axon")
        models[name].load_state_dict(base.state_dict())
    losses = {
        name: ex.train(torch.compile(m, fullgraph=True) if name == "compiled" else m, tokens, steps=3)
        for name, m in models.items()
    }
    assert losses["unfused"][-1] < losses["unfused"][0]
    for name in ("fused", "compiled"):
        torch.testing.assert_close(losses[name], losses["unfused"], atol=1e-5, rtol=1e-5)
        for (pname, p), q in zip(models[name].named_parameters(), base.parameters(), strict=True):
            torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(), atol=1e-5, rtol=1e-5, msg=pname)
