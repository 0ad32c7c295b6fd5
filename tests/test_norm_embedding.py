"""Native batch / layer / group / RMS normalization and embedding (forward and the
deterministic backward) against PyTorch's CPU results, with no CPU fallback."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F
from conftest import DEVICE, compare, make_cpu, to_axon
from test_conv_pool import GRAD_TOL, check_fn

pytestmark = pytest.mark.usefixtures("no_fallback")

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


# ---- layer norm / RMS norm ----------------------------------------------------------------------


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize(
    "shape,norm", [((4, 10), (10,)), ((2, 3, 300), (300,)), ((2, 3, 4, 5), (4, 5)), ((5,), (5,))], ids=str
)
def test_layer_norm(shape, norm, affine):
    inputs = [make_cpu(shape)]
    if affine:
        inputs += [make_cpu(norm), make_cpu(norm)]
    check_fn(lambda x, *wb: F.layer_norm(x, norm, *wb, eps=1e-5), inputs)


@pytest.mark.parametrize("dtype", DTYPES[1:], ids=str)
def test_layer_norm_dtypes(dtype):
    inputs = [make_cpu((3, 2, 16), dtype), make_cpu((16,), dtype), make_cpu((16,), dtype)]
    check_fn(lambda x, w, b: F.layer_norm(x, (16,), w, b), inputs, dtype=dtype)


def test_layer_norm_noncontiguous_and_stats():
    check_fn(lambda x, w: F.layer_norm(x, (6,), w), [make_cpu((5, 6)), make_cpu((6,))], layout="transposed")
    x = make_cpu((3, 4, 6))
    ref = torch.native_layer_norm(x, (4, 6), None, None, 1e-5)
    out = torch.native_layer_norm(x.to("axon"), (4, 6), None, None, 1e-5)
    compare(ref, out, atol=1e-5, rtol=1e-5)


def test_rms_norm():
    check_fn(lambda x, w: F.rms_norm(x, (8,), w, eps=1e-6), [make_cpu((3, 5, 8)), make_cpu((8,))])


# ---- group norm ---------------------------------------------------------------------------------


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 4), 3), ((3, 4, 7), 4), ((2, 8), 2), ((1, 4, 40, 40), 1)], ids=str)
def test_group_norm(shape, groups, affine):
    c = shape[1]
    inputs = [make_cpu(shape)] + ([make_cpu((c,)), make_cpu((c,))] if affine else [])
    check_fn(lambda x, *wb: F.group_norm(x, groups, *wb), inputs)


@pytest.mark.parametrize("dtype", DTYPES[1:], ids=str)
def test_group_norm_dtypes(dtype):
    inputs = [make_cpu((2, 4, 3, 3), dtype), make_cpu((4,), dtype), make_cpu((4,), dtype)]
    check_fn(lambda x, w, b: F.group_norm(x, 2, w, b), inputs, dtype=dtype, layout="transposed")


# ---- batch norm ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5), (2, 2, 3, 2, 3)], ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm(shape, training):
    c = shape[1]
    rm, rv = make_cpu((c,)), make_cpu((c,), low=0.5, high=2)
    rm_ax, rv_ax = rm.to("axon"), rv.to("axon")
    check_fn(
        lambda x, w, b: F.batch_norm(
            x,
            rm if x.device.type == "cpu" else rm_ax,
            rv if x.device.type == "cpu" else rv_ax,
            w,
            b,
            training,
            0.3,
            1e-5,
        ),
        [make_cpu(shape), make_cpu((c,)), make_cpu((c,))],
    )
    compare(rm, rm_ax, atol=1e-5, rtol=1e-5)
    compare(rv, rv_ax, atol=1e-5, rtol=1e-5)


def test_batch_norm_module_running_stats_and_layouts():
    bn = torch.nn.BatchNorm2d(4)
    bn_ax = torch.nn.BatchNorm2d(4).to("axon")
    for _ in range(3):
        x = make_cpu((3, 4, 5, 5))
        compare(bn(x).detach(), bn_ax(x.to("axon")).detach(), atol=1e-5, rtol=1e-5)
    compare(bn.running_mean, bn_ax.running_mean, atol=1e-5, rtol=1e-5)
    compare(bn.running_var, bn_ax.running_var, atol=1e-5, rtol=1e-5)
    assert int(bn_ax.num_batches_tracked) == 3
    bn.eval()
    bn_ax.eval()
    x = make_cpu((2, 4, 3, 3)).to(memory_format=torch.channels_last)
    compare(bn(x).detach(), bn_ax(x.to("axon")).detach(), atol=1e-5, rtol=1e-5)
    check_fn(lambda x: F.batch_norm(x, None, None, training=True), [make_cpu((3, 2, 4))], layout="transposed")


@pytest.mark.parametrize("dtype", DTYPES[1:], ids=str)
def test_batch_norm_dtypes(dtype):
    ref = torch.float64 if dtype in (torch.float16, torch.bfloat16) else dtype
    rm, rv = torch.zeros(3, dtype=ref), torch.ones(3, dtype=ref)
    rm_ax, rv_ax = rm.to(dtype).to("axon"), rv.to(dtype).to("axon")
    inputs = [make_cpu((4, 3, 2, 2), dtype), make_cpu((3,), dtype), make_cpu((3,), dtype)]
    check_fn(
        lambda x, w, b: F.batch_norm(
            x, rm if x.device.type == "cpu" else rm_ax, rv if x.device.type == "cpu" else rv_ax, w, b, True
        ),
        inputs,
        dtype=dtype,
    )
    compare(rm.to(dtype), rm_ax, **GRAD_TOL[dtype])
    compare(rv.to(dtype), rv_ax, **GRAD_TOL[dtype])


def test_batch_norm_mixed_precision():
    """float16 activations with float32 parameters and running stats (autocast style)."""
    x = make_cpu((4, 3, 5), torch.float16)
    w, b, rm, rv = make_cpu((3,)), make_cpu((3,)), torch.zeros(3), torch.ones(3)
    ref = torch.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5)
    rm_ax, rv_ax = torch.zeros(3, device="axon"), torch.ones(3, device="axon")
    out = torch.native_batch_norm(x.to("axon"), w.to("axon"), b.to("axon"), rm_ax, rv_ax, True, 0.1, 1e-5)
    compare(ref, out, atol=2e-3, rtol=2e-3)
    compare(rm, rm_ax, atol=1e-4, rtol=1e-4)


def test_batch_norm_new_entry_points():
    """_batch_norm_with_update / _batch_norm_no_update / batch_norm_backward (export's ops)."""
    x, w, b, g = make_cpu((4, 3, 5)), make_cpu((3,)), make_cpu((3,)), make_cpu((4, 3, 5))
    rm, rv = torch.zeros(3), torch.ones(3)
    rm_ax, rv_ax = rm.to("axon"), rv.to("axon")
    aten = torch.ops.aten
    ref = aten._batch_norm_with_update(x, w, b, rm, rv, 0.1, 1e-5)
    out = aten._batch_norm_with_update(x.to("axon"), w.to("axon"), b.to("axon"), rm_ax, rv_ax, 0.1, 1e-5)
    compare(ref[:3], out[:3], atol=1e-5, rtol=1e-5)
    compare(rv, rv_ax, atol=1e-5, rtol=1e-5)
    ax = [t.to("axon") for t in (g, x, w)]
    compare(
        aten.batch_norm_backward(g, x, w, rm, rv, ref[1], ref[2], True, 1e-5, [True] * 3, ref[3]),
        aten.batch_norm_backward(*ax, rm_ax, rv_ax, out[1], out[2], True, 1e-5, [True] * 3, out[3]),
        atol=1e-4,
        rtol=1e-4,
    )
    ref = aten._batch_norm_no_update(x, w, b, rm, rv, 0.1, 1e-5)
    out = aten._batch_norm_no_update(x.to("axon"), w.to("axon"), b.to("axon"), rm_ax, rv_ax, 0.1, 1e-5)
    compare(ref[0], out[0], atol=1e-5, rtol=1e-5)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="more than 1 value"):
        F.batch_norm(torch.randn(1, 3, device="axon"), None, None, training=True)


# ---- embedding ----------------------------------------------------------------------------------


@pytest.mark.parametrize("padding_idx", [None, 0, 3])
@pytest.mark.parametrize("scale", [False, True], ids=["plain", "scale_grad_by_freq"])
def test_embedding(padding_idx, scale):
    w = make_cpu((10, 6))
    idx = torch.tensor([[1, 3, 0, 3], [9, 1, 1, 0], [2, 3, 3, 3]])
    check_fn(lambda w, i: F.embedding(i, w, padding_idx=padding_idx, scale_grad_by_freq=scale), [w, idx])


def test_embedding_dtypes_and_int32():
    for dt in DTYPES[1:]:
        idx = torch.randint(0, 50, (7, 9))
        check_fn(lambda w, i: F.embedding(i, w), [make_cpu((50, 5), dt), idx], dtype=dt)
    idx = torch.randint(0, 20, (40,), dtype=torch.int32)
    check_fn(lambda w, i: F.embedding(i, w, padding_idx=2), [make_cpu((20, 8)), idx])


def test_embedding_backward_deterministic():
    g = make_cpu((500, 16))
    idx = torch.randint(0, 7, (500,))
    a = torch.ops.aten.embedding_dense_backward(g.to("axon"), idx.to("axon"), 7, -1, False)
    b = torch.ops.aten.embedding_dense_backward(g.to("axon"), idx.to("axon"), 7, -1, False)
    assert torch.equal(a.cpu(), b.cpu())
    compare(torch.ops.aten.embedding_dense_backward(g, idx, 7, -1, False), a, atol=1e-4, rtol=1e-5)


def test_transformer_block_training_step():
    import copy

    torch.manual_seed(0)
    cpu_model = torch.nn.ModuleList(
        [torch.nn.Embedding(20, 16, padding_idx=0), torch.nn.LayerNorm(16), torch.nn.Linear(16, 20)]
    )
    tok = torch.randint(0, 20, (3, 7))

    def step(model, device):
        emb, ln, lin = model
        h = emb(tok.to(device))
        h = h + F.gelu(ln(h))
        loss = F.cross_entropy(lin(F.rms_norm(h, (16,))).flatten(0, 1), tok.flatten().to(device))
        loss.backward()
        return loss.detach(), [p.grad for p in model.parameters()]

    ax_model = copy.deepcopy(cpu_model).to("axon")
    ref_loss, ref_grads = step(cpu_model, "cpu")
    loss, grads = step(ax_model, "axon")
    compare(ref_loss, loss, atol=1e-5, rtol=1e-5)
    for r, g in zip(ref_grads, grads, strict=True):
        compare(r, g, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("shape", [(2, 5, 5, 5), (3, 2, 9), (4, 16, 8, 8)], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_inference_rows(shape, affine):
    """Inference batch norm (running statistics) over planes with and without a tail of 8."""
    torch.manual_seed(0)
    x = torch.randn(shape) * 3 + 1
    c = shape[1]
    rm, rv = torch.randn(c), torch.rand(c) + 0.5
    w, b = (torch.randn(c), torch.randn(c)) if affine else (None, None)

    def run(t, dev):
        on = lambda v: None if v is None else v.to(dev)  # noqa: E731
        return F.batch_norm(t, on(rm), on(rv), on(w), on(b), training=False, eps=1e-3)

    compare(run(x, "cpu"), run(to_axon(x), DEVICE), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dim", [0, -1])
def test_weight_norm_fused_interface_is_native(dim):
    """nn.utils.weight_norm on axon takes PyTorch's fused path (_weight_norm_interface and its
    backward, as wav2vec2-style convolutions do): natively, against the CPU."""
    torch.manual_seed(0)
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(4, 6, 3), dim=dim)
    x = torch.randn(2, 4, 9)
    results = []
    torch.axon.fallback_ops(reset=True)
    for device in ("cpu", "axon"):
        m = copy.deepcopy(conv).to(device)
        out = m(x.to(device))
        out.square().sum().backward()
        results.append([out.detach().cpu()] + [p.grad.cpu() for p in m.parameters()])
    for c, a in zip(*results, strict=True):
        torch.testing.assert_close(a, c, atol=1e-5, rtol=1e-4)
    assert not {"aten::_weight_norm_interface", "aten::_weight_norm_interface_backward"} & set(
        torch.axon.fallback_ops()
    )
