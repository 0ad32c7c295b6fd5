"""Recurrent layers: the fused LSTM and GRU cells (kernels/rnn.cl) and the layers that call them
off the CPU, compared with PyTorch's CPU layers (which compute the same cells unfused)."""

from __future__ import annotations

import pytest
import torch
from conftest import DEVICE, compare
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

pytestmark = pytest.mark.usefixtures("no_fallback")

DTYPES = [torch.float32, torch.float64]
TOL = {torch.float32: {"atol": 2e-5, "rtol": 2e-5}, torch.float64: {"atol": 1e-10, "rtol": 1e-10}}


def _lstm_reference(ig, hg, cx, ib, hb):
    gates = ig + hg + (ib + hb if ib is not None else 0)
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, torch.cat([i, f, g, o], 1)


def _gru_reference(ig, hg, hx, ib, hb):
    if ib is not None:
        ig, hg = ig + ib, hg + hb
    ir, iz, in_ = ig.chunk(3, 1)
    hr, hz, hn = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return n + z * (hx - n), torch.cat([r, z, n, hx, hn], 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_fused_cells_against_their_definition(dtype, bias):
    """The ops themselves (the CPU has no kernel for them): outputs, workspace and gradients."""
    g = torch.Generator().manual_seed(1)
    batch, hidden = 3, 5

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=dtype)

    for gates, op, reference in [
        (4, torch.ops.aten._thnn_fused_lstm_cell, _lstm_reference),
        (3, torch.ops.aten._thnn_fused_gru_cell, _gru_reference),
    ]:
        args = [rand(batch, gates * hidden), rand(batch, gates * hidden), rand(batch, hidden)]
        biases = [rand(gates * hidden), rand(gates * hidden)] if bias else [None, None]
        cpu_inputs = [t.requires_grad_() for t in args + [b for b in biases if b is not None]]
        ax_inputs = [t.detach().to(DEVICE).requires_grad_() for t in cpu_inputs]
        ax_args = ax_inputs[:3] + (ax_inputs[3:] if bias else [None, None])
        cpu_args = cpu_inputs[:3] + (cpu_inputs[3:] if bias else [None, None])
        want, got = reference(*cpu_args), op(*ax_args)
        for w, o in zip(want, got, strict=True):
            compare(w.detach(), o.detach(), **TOL[dtype])
        # Backward through every output the layers use (hy, and cy for LSTM).
        weights = [rand(batch, hidden) for _ in want[:-1]]
        sum(w_ * o for w_, o in zip(weights, want[:-1], strict=True)).sum().backward()
        sum(w_.to(DEVICE) * o for w_, o in zip(weights, got[:-1], strict=True)).sum().backward()
        for c, a in zip(cpu_inputs, ax_inputs, strict=True):
            compare(c.grad, a.grad, **TOL[dtype])


def test_lstm_cell_backward_with_one_gradient():
    """Only cy's gradient (hy unused), and neither: CUDA's conventions."""
    g = torch.Generator().manual_seed(2)
    ig, hg = torch.randn(2, 12, generator=g), torch.randn(2, 12, generator=g)
    cx = torch.randn(2, 3, generator=g)
    hy, cy, ws = torch.ops.aten._thnn_fused_lstm_cell(*(t.to(DEVICE) for t in (ig, hg, cx)))
    grad_cy = torch.randn(2, 3, generator=g)
    grads = torch.ops.aten._thnn_fused_lstm_cell_backward_impl(None, grad_cy.to(DEVICE), cx.to(DEVICE), cy, ws, True)
    ig_c = ig.clone().requires_grad_()
    cx_c = cx.clone().requires_grad_()
    _, cy_ref, _ = _lstm_reference(ig_c, hg, cx_c, None, None)
    (cy_ref * grad_cy).sum().backward()
    compare(ig_c.grad, grads[0])
    compare(cx_c.grad, grads[1])
    compare(ig_c.grad.sum(0), grads[2])
    none = torch.ops.aten._thnn_fused_lstm_cell_backward_impl(None, None, cx.to(DEVICE), cy, ws, True)
    assert all(t is None for t in none)


def test_fused_cell_errors():
    ig = torch.zeros(2, 8, device=DEVICE)
    with pytest.raises(RuntimeError, match="do not match the state"):
        torch.ops.aten._thnn_fused_lstm_cell(ig, ig, torch.zeros(2, 3, device=DEVICE))
    with pytest.raises(RuntimeError, match="both biases or neither"):
        torch.ops.aten._thnn_fused_gru_cell(
            torch.zeros(2, 6, device=DEVICE),
            torch.zeros(2, 6, device=DEVICE),
            torch.zeros(2, 2, device=DEVICE),
            torch.zeros(6, device=DEVICE),
        )


def _run(module, inputs, dtype):
    """Forward and backward of a module on the CPU and on axon; outputs and gradients compared."""
    torch.manual_seed(0)
    cpu = module.to(dtype)
    ax = module_copy(cpu)
    out_cpu, out_ax = cpu(*inputs), ax(*[_to_device(t) for t in inputs])
    _compare_nested(out_cpu, out_ax, dtype)
    loss_cpu, loss_ax = _loss(out_cpu), _loss(out_ax)
    loss_cpu.backward()
    loss_ax.backward()
    for (name, p), q in zip(cpu.named_parameters(), ax.parameters(), strict=True):
        assert q.grad is not None, name
        compare(p.grad, q.grad, **TOL[dtype])


def module_copy(module):
    import copy

    return copy.deepcopy(module).to(DEVICE)


def _to_device(t):
    if isinstance(t, torch.nn.utils.rnn.PackedSequence):  # a tuple too: first
        return t.to(DEVICE)
    if isinstance(t, tuple):
        return tuple(_to_device(x) for x in t)
    return t.to(DEVICE) if isinstance(t, torch.Tensor) else t


def _flatten(out):
    if isinstance(out, torch.nn.utils.rnn.PackedSequence):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _flatten(o)]
    return [out]


def _compare_nested(cpu, ax, dtype):
    for c, a in zip(_flatten(cpu), _flatten(ax), strict=True):
        compare(c.detach(), a.detach(), **TOL[dtype])


def _loss(out):
    # A weighted sum, so every output element gets its own gradient.
    return sum(
        (x * torch.linspace(-1, 1, x.numel(), dtype=x.dtype, device=x.device).view(x.shape)).sum()
        for x in _flatten(out)
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(
    "kind,kwargs",
    [
        ("LSTM", {}),
        ("LSTM", {"num_layers": 2, "bidirectional": True}),
        ("LSTM", {"proj_size": 3}),
        ("LSTM", {"batch_first": True, "bias": False}),
        ("GRU", {}),
        ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
        ("GRU", {"bias": False}),
        ("RNN", {"nonlinearity": "tanh", "num_layers": 2}),
        ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={x}" for k, x in v.items()) or "default",
)
def test_layers(kind, kwargs, dtype):
    torch.manual_seed(0)
    module = getattr(nn, kind)(4, 6, **kwargs)
    seq = torch.randn(5, 2, 4, dtype=dtype)
    if kwargs.get("batch_first"):
        seq = seq.transpose(0, 1).contiguous()
    _run(module, (seq,), dtype)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_layers_with_initial_state_and_packed_sequences(kind):
    dtype = torch.float32
    torch.manual_seed(0)
    module = getattr(nn, kind)(4, 6, num_layers=2)
    seq = torch.randn(5, 3, 4)
    h0 = torch.randn(2, 3, 6)
    state = (h0, torch.randn(2, 3, 6)) if kind == "LSTM" else h0
    _run(module, (seq, state), dtype)
    packed = pack_padded_sequence(seq, torch.tensor([5, 3, 2]), enforce_sorted=True)
    cpu = module.to(dtype)
    ax = module_copy(cpu)
    out_cpu, _ = cpu(packed)
    out_ax, _ = ax(_to_device(packed))
    padded_cpu, lengths_cpu = pad_packed_sequence(out_cpu)
    padded_ax, lengths_ax = pad_packed_sequence(out_ax)
    compare(padded_cpu.detach(), padded_ax.detach(), **TOL[dtype])
    assert torch.equal(lengths_cpu, lengths_ax)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells(kind):
    dtype = torch.float32
    torch.manual_seed(0)
    module = getattr(nn, kind)(4, 5)
    x = torch.randn(3, 4)
    hx = torch.randn(3, 5)
    state = (hx, torch.randn(3, 5)) if kind == "LSTMCell" else hx
    _run(module, (x, state), dtype)
    _run(getattr(nn, kind)(4, 5), (x,), dtype)  # zero initial state
