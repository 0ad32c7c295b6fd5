"""Native convolution (1-d to 3-d, strides, padding, dilation, groups, transposed), pooling,
resampling and reflection / replication padding against PyTorch's CPU results, forward and
backward, with no CPU fallback."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import compare, make_cpu

pytestmark = pytest.mark.usefixtures("no_fallback")

GRAD_TOL = {
    torch.float32: {"atol": 1e-4, "rtol": 1e-4},
    torch.float64: {"atol": 1e-10, "rtol": 1e-9},
    torch.float16: {"atol": 2e-2, "rtol": 2e-2},
    torch.bfloat16: {"atol": 1.5e-1, "rtol": 5e-2},
}


def _leaf(t: torch.Tensor, device: str, layout: str = "contiguous") -> torch.Tensor:
    """A leaf on `device` with t's values; "transposed" makes it non-contiguous (same shape)."""
    if layout == "transposed" and t.dim() >= 2:
        base = t.transpose(-1, -2).contiguous().to(device)
        return base.transpose(-1, -2).detach().requires_grad_()
    if layout == "sliced":
        base = torch.cat([t, t], dim=-1).to(device)
        return base[..., : t.shape[-1]].detach().requires_grad_()
    return t.clone().to(device).requires_grad_()


def check_fn(fn, inputs, dtype=torch.float32, layout="contiguous", grad=True, tol=None):
    """fn(*inputs) on the CPU (in float64 for 16-bit dtypes as the reference) and on axon:
    output and the gradients of every floating input are compared."""
    tol = tol or GRAD_TOL[dtype]
    ref_dtype = torch.float64 if dtype in (torch.float16, torch.bfloat16) else dtype
    cpu_in = [_leaf(t.to(ref_dtype), "cpu") if t.is_floating_point() else t for t in inputs]
    ax_in = [
        _leaf(t, "axon", layout if i == 0 else "contiguous") if t.is_floating_point() else t.to("axon")
        for i, t in enumerate(inputs)
    ]
    y_cpu, y_ax = fn(*cpu_in), fn(*ax_in)
    assert y_ax.dtype == dtype
    compare(y_cpu.detach().to(dtype), y_ax.detach(), **tol)
    if not grad:
        return
    g = make_cpu(y_cpu.shape, dtype)
    y_cpu.backward(g.to(ref_dtype))
    y_ax.backward(g.to("axon"))
    for c, a in zip(cpu_in, ax_in, strict=True):
        if isinstance(c, torch.Tensor) and c.requires_grad:
            compare(c.grad.to(dtype), a.grad, **tol)


# ---- convolution --------------------------------------------------------------------------------

CONV_CASES = [
    # (nd, N, C, O, spatial, kernel, kwargs)
    (2, 2, 3, 4, (7, 6), (3, 3), dict(padding=1)),
    (2, 2, 4, 6, (9, 8), (3, 2), dict(stride=2, padding=(1, 0), dilation=(1, 2))),
    (2, 1, 4, 4, (5, 5), (3, 3), dict(groups=4, padding=1)),  # depthwise
    (2, 2, 6, 4, (6, 7), (1, 1), dict(groups=2)),
    (1, 2, 3, 5, (11,), (4,), dict(stride=3, padding=2, dilation=2)),
    (3, 1, 2, 3, (4, 5, 4), (2, 3, 2), dict(stride=(1, 2, 1), padding=1)),
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}d-{c[5]}-{c[6]}")
def test_conv(case, bias):
    nd, n, c, o, spatial, kernel, kw = case
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    g = kw.get("groups", 1)
    x = make_cpu((n, c, *spatial))
    w = make_cpu((o, c // g, *kernel))
    inputs = [x, w] + ([make_cpu((o,))] if bias else [])
    check_fn(lambda x, w, *b: fn(x, w, *b, **kw), inputs)


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_conv_noncontiguous(layout):
    x, w, b = make_cpu((2, 3, 6, 5)), make_cpu((4, 3, 3, 3)), make_cpu((4,))
    check_fn(lambda x, w, b: F.conv2d(x, w, b, padding=1, stride=(2, 1)), [x, w, b], layout=layout)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_conv_dtypes(dtype):
    x, w, b = (make_cpu(s, dtype, low=-1, high=1) for s in ((2, 4, 6, 5), (6, 2, 3, 3), (6,)))
    check_fn(lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2), [x, w, b], dtype=dtype)


TRANSPOSED_CASES = [
    (2, 2, 4, 3, (4, 5), (3, 3), dict(stride=2, padding=1, output_padding=1)),
    (2, 1, 4, 6, (3, 3), (2, 3), dict(groups=2, dilation=(2, 1))),
    (1, 2, 3, 2, (6,), (3,), dict(stride=3, padding=1, output_padding=2)),
    (3, 1, 2, 2, (2, 3, 2), (2, 2, 2), dict(stride=2)),
]


@pytest.mark.parametrize("case", TRANSPOSED_CASES, ids=lambda c: f"{c[0]}d-{c[6]}")
def test_conv_transpose(case):
    nd, n, c, o, spatial, kernel, kw = case
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[nd]
    g = kw.get("groups", 1)
    x, w, b = make_cpu((n, c, *spatial)), make_cpu((c, o // g, *kernel)), make_cpu((o,))
    check_fn(lambda x, w, b: fn(x, w, b, **kw), [x, w, b])


def test_conv_module_padding_same():
    conv = torch.nn.Conv2d(3, 4, 3, padding="same", dilation=2)
    x = make_cpu((1, 3, 7, 6))
    ref = conv(x)
    out = conv.to("axon")(x.to("axon"))
    compare(ref.detach(), out.detach(), atol=1e-5, rtol=1e-5)


def test_conv_errors():
    x, w = torch.randn(1, 3, 5, 5, device="axon"), torch.randn(4, 2, 3, 3, device="axon")
    with pytest.raises(RuntimeError, match="channels"):
        F.conv2d(x, w)
    with pytest.raises(RuntimeError, match="Kernel size"):
        F.conv2d(torch.randn(1, 2, 2, 2, device="axon"), w)


# ---- pooling ------------------------------------------------------------------------------------

MAX_POOL_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 1), dilation=(1, 2)),
    dict(kernel_size=3, stride=2, ceil_mode=True),
]


@pytest.mark.parametrize("kw", MAX_POOL_CASES, ids=str)
def test_max_pool2d(kw):
    x = make_cpu((2, 3, 9, 8))
    check_fn(lambda x: F.max_pool2d(x, **kw), [x])
    _, i_cpu = F.max_pool2d(x, return_indices=True, **kw)
    _, i_ax = F.max_pool2d(x.to("axon"), return_indices=True, **kw)
    compare(i_cpu, i_ax)


def test_max_pool_1d_3d_unbatched_and_layouts():
    check_fn(lambda x: F.max_pool1d(x, 3, stride=2, padding=1), [make_cpu((2, 3, 10))])
    check_fn(lambda x: F.max_pool3d(x, 2, stride=(1, 2, 2)), [make_cpu((1, 2, 4, 5, 6))])
    check_fn(lambda x: F.max_pool2d(x, 2), [make_cpu((3, 6, 6))])
    check_fn(lambda x: F.max_pool2d(x, 3, 1, 1), [make_cpu((2, 2, 5, 7))], layout="transposed")
    x = make_cpu((2, 4, 6, 6)).to(memory_format=torch.channels_last)
    compare(F.max_pool2d(x, 2), F.max_pool2d(x.to("axon"), 2))


AVG_POOL_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=2, ceil_mode=True),
    dict(kernel_size=3, padding=1, divisor_override=5),
]


@pytest.mark.parametrize("kw", AVG_POOL_CASES, ids=str)
def test_avg_pool2d(kw):
    check_fn(lambda x: F.avg_pool2d(x, **kw), [make_cpu((2, 3, 9, 8))])


def test_avg_pool_int64():
    x = torch.randint(-50, 50, (2, 3, 7, 6))
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)):
        compare(F.avg_pool2d(x, **kw), F.avg_pool2d(x.to("axon"), **kw))


def test_avg_pool_1d_3d_dtypes():
    check_fn(lambda x: F.avg_pool1d(x, 3, stride=2, padding=1), [make_cpu((2, 3, 10))])
    check_fn(lambda x: F.avg_pool3d(x, 2, padding=1, count_include_pad=False), [make_cpu((1, 2, 4, 5, 3))])
    for dt in (torch.float64, torch.float16, torch.bfloat16):
        check_fn(lambda x: F.avg_pool2d(x, 3, 2, 1), [make_cpu((2, 3, 7, 7), dt)], dtype=dt)
        check_fn(lambda x: F.max_pool2d(x, 3, 2, 1), [make_cpu((2, 3, 7, 7), dt)], dtype=dt)


@pytest.mark.parametrize("out", [1, (3, 2), (5, 7), (4, 4)], ids=str)
def test_adaptive_avg_pool2d(out):
    check_fn(lambda x: F.adaptive_avg_pool2d(x, out), [make_cpu((2, 3, 9, 7))])
    check_fn(lambda x: F.adaptive_avg_pool2d(x, out), [make_cpu((3, 9, 7))], layout="transposed")


@pytest.mark.parametrize("out", [1, (3, 2), (5, 7)], ids=str)
def test_adaptive_max_pool2d(out):
    x = make_cpu((2, 3, 9, 7))
    check_fn(lambda x: F.adaptive_max_pool2d(x, out), [x])
    check_fn(lambda x: F.adaptive_max_pool2d(x, out), [make_cpu((3, 9, 7))], layout="transposed")
    compare(
        F.adaptive_max_pool2d(x, out, return_indices=True)[1],
        F.adaptive_max_pool2d(x.to("axon"), out, return_indices=True)[1],
    )


def test_adaptive_max_pool3d():
    check_fn(lambda x: F.adaptive_max_pool3d(x, (2, 3, 2)), [make_cpu((1, 2, 5, 6, 4))])


def test_adaptive_avg_pool3d():
    check_fn(lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), [make_cpu((1, 2, 5, 6, 4))])


# ---- resampling ---------------------------------------------------------------------------------

UPSAMPLE_CASES = [
    dict(scale_factor=2),
    dict(size=(7, 5)),
    dict(scale_factor=(1.5, 0.75)),
    dict(size=(3, 11)),
]


@pytest.mark.parametrize("kw", UPSAMPLE_CASES, ids=str)
@pytest.mark.parametrize("mode", ["nearest", "bilinear-ac", "bilinear"])
def test_upsample2d(mode, kw):
    extra = {}
    if mode.startswith("bilinear"):
        extra["align_corners"] = mode == "bilinear-ac"
        mode = "bilinear"
    check_fn(lambda x: F.interpolate(x, mode=mode, **kw, **extra), [make_cpu((2, 3, 5, 6))])


def test_upsample_1d_3d_layouts_dtypes():
    check_fn(lambda x: F.interpolate(x, scale_factor=2.5, mode="linear"), [make_cpu((2, 3, 6))])
    check_fn(lambda x: F.interpolate(x, size=9, mode="nearest"), [make_cpu((2, 3, 4))])
    check_fn(
        lambda x: F.interpolate(x, size=(3, 4, 5), mode="trilinear", align_corners=True), [make_cpu((1, 2, 2, 3, 4))]
    )
    check_fn(lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), [make_cpu((1, 2, 2, 3, 2))])
    check_fn(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), [make_cpu((2, 2, 4, 5))], layout="transposed")
    for dt in (torch.float64, torch.bfloat16):
        check_fn(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), [make_cpu((1, 2, 3, 4), dt)], dtype=dt)


@pytest.mark.parametrize(
    "shape,kw",
    [
        ((2, 3, 5), dict(size=8)),
        ((2, 3, 5, 6), dict(scale_factor=1.7)),
        ((2, 3, 5, 6), dict(size=(3, 4))),
        ((1, 2, 2, 3, 4), dict(scale_factor=2)),
    ],
    ids=str,
)
def test_upsample_nearest_exact(shape, kw):
    check_fn(lambda x: F.interpolate(x, mode="nearest-exact", **kw), [make_cpu(shape)])


# ---- padding ------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["reflect", "replicate", "constant"])
@pytest.mark.parametrize(
    "shape,pad",
    [
        ((2, 3, 7), (2, 3)),
        ((2, 3, 5, 6), (1, 2, 3, 0)),
        ((3, 4, 5), (2, 2, 1, 1)),
        ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)),
    ],
    ids=str,
)
def test_pad(mode, shape, pad):
    check_fn(lambda x: F.pad(x, pad, mode=mode), [make_cpu(shape)])


def test_pad_layouts_dtypes():
    check_fn(lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), [make_cpu((2, 3, 4, 5))], layout="transposed")
    check_fn(lambda x: F.pad(x, (2, 1, 1, 2), mode="replicate"), [make_cpu((2, 3, 4, 5))], layout="sliced")
    for dt in (torch.float64, torch.float16):
        check_fn(lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), [make_cpu((2, 3, 4, 5), dt)], dtype=dt)
    x = torch.arange(10, dtype=torch.int64).view(1, 2, 5)
    compare(F.pad(x, (2, 2), mode="reflect"), F.pad(x.to("axon"), (2, 2), mode="reflect"))
    with pytest.raises(RuntimeError, match="Padding size"):
        F.pad(torch.randn(1, 2, 3, device="axon"), (3, 0), mode="reflect")


# ---- a small convolutional network end to end ---------------------------------------------------


def test_small_cnn_training_step():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1, bias=False),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 5),
    )
    ax = [p.detach().clone() for p in net.parameters()]
    x, y = make_cpu((4, 3, 12, 12)), torch.randint(0, 5, (4,))
    loss = F.cross_entropy(net(x), y)
    loss.backward()
    grads = [p.grad.clone() for p in net.parameters()]  # .to() moves the grads too
    net = net.to("axon")
    for p, v in zip(net.parameters(), ax, strict=True):
        p.data.copy_(v.to("axon"))
        p.grad = None
    loss_ax = F.cross_entropy(net(x.to("axon")), y.to("axon"))
    loss_ax.backward()
    compare(loss.detach(), loss_ax.detach(), atol=1e-5, rtol=1e-5)
    for g, p in zip(grads, net.parameters(), strict=True):
        compare(g, p.grad, atol=1e-4, rtol=1e-4)


# name -> (fn(x, w), weight shape or None, input shape); 5-d inputs use channels_last_3d.
CHANNELS_LAST_OPS = {
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), (4, 4, 3, 3), (2, 4, 5, 5)),
    "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2), (4, 3, 2, 2), (2, 4, 5, 5)),
    "relu_add": (lambda x, w: F.relu(x) + 1, None, (2, 4, 5, 5)),
    "batch_norm": (lambda x, w: F.batch_norm(x, None, None, training=True), None, (2, 4, 5, 5)),
    "group_norm": (lambda x, w: F.group_norm(x, 2), None, (2, 4, 5, 5)),
    "max_pool2d": (lambda x, w: F.max_pool2d(x, 2), None, (2, 4, 5, 5)),
    "adaptive_avg_pool2d": (lambda x, w: F.adaptive_avg_pool2d(x, 3), None, (2, 4, 5, 5)),
    "upsample_bilinear": (lambda x, w: F.interpolate(x, scale_factor=2, mode="bilinear"), None, (2, 4, 5, 5)),
    "reflection_pad2d": (lambda x, w: F.pad(x, (1, 2, 2, 1), mode="reflect"), None, (2, 4, 5, 5)),
    "replication_pad2d": (lambda x, w: F.pad(x, (1, 2, 2, 1), mode="replicate"), None, (2, 4, 5, 5)),
    "conv3d": (lambda x, w: F.conv3d(x, w, padding=1), (3, 4, 3, 3, 3), (2, 4, 4, 5, 5)),
    "batch_norm3d": (lambda x, w: F.batch_norm(x, None, None, training=True), None, (2, 4, 4, 5, 5)),
    "max_pool3d": (lambda x, w: F.max_pool3d(x, 2), None, (2, 4, 4, 5, 5)),
    "avg_pool3d": (lambda x, w: F.avg_pool3d(x, 2), None, (2, 4, 4, 5, 5)),
    "adaptive_avg_pool3d": (lambda x, w: F.adaptive_avg_pool3d(x, 2), None, (2, 4, 4, 5, 5)),
    "upsample_trilinear": (lambda x, w: F.interpolate(x, scale_factor=2, mode="trilinear"), None, (2, 4, 4, 5, 5)),
    "reflection_pad3d": (lambda x, w: F.pad(x, (1, 2, 2, 1, 1, 1), mode="reflect"), None, (2, 4, 4, 5, 5)),
    "replication_pad3d": (lambda x, w: F.pad(x, (1, 2, 2, 1, 1, 1), mode="replicate"), None, (2, 4, 4, 5, 5)),
}


@pytest.mark.parametrize(
    "name,which",
    [
        (name, which)
        for name, (_, w, _) in CHANNELS_LAST_OPS.items()
        for which in (["input", "weight"] if w else ["input"])
    ],
)
def test_channels_last_results(name, which):
    """channels_last (channels_last_3d) operands give results in the layout the CPU gives,
    backward too (the CPU keeps some 3-d results contiguous: axon must match that as well)."""
    fn, wshape, xshape = CHANNELS_LAST_OPS[name]
    cl = torch.channels_last if len(xshape) == 4 else torch.channels_last_3d
    x = make_cpu(xshape)
    w = make_cpu(wshape) if wshape else None
    if which == "input":
        x = x.to(memory_format=cl)
    else:
        w = w.to(memory_format=cl)
    xs = [x.clone().requires_grad_(), x.to("axon").requires_grad_()]
    ws = [w.clone().requires_grad_(), w.to("axon").requires_grad_()] if w is not None else [None, None]
    outs = [fn(xi, wi) for xi, wi in zip(xs, ws, strict=True)]
    compare(outs[0].detach(), outs[1].detach(), atol=1e-4, rtol=1e-4)

    def layout(t):
        return t.is_contiguous(memory_format=cl), t.is_contiguous()

    assert layout(outs[0]) == layout(outs[1]), (outs[0].stride(), outs[1].stride())
    for out in outs:
        out.backward(torch.ones_like(out))
    compare(xs[0].grad, xs[1].grad, atol=1e-4, rtol=1e-4)
    assert layout(xs[0].grad) == layout(xs[1].grad), (xs[0].grad.stride(), xs[1].grad.stride())
    if w is not None:
        compare(ws[0].grad, ws[1].grad, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    "mode,shape,size",
    [
        ("linear", (1, 1, 2), 16),
        ("bilinear", (1, 2, 2, 3), (16, 24)),
        ("trilinear", (1, 1, 2, 2, 2), (16, 16, 16)),
        ("linear", (2, 3, 5), 64),
    ],
)
@pytest.mark.parametrize("align_corners", [False, True])
def test_linear_upsampling_backward_at_large_scale_factors(mode, shape, size, align_corners):
    """Scale factors of 8 and more: each input's gradient gathers every output that reads it
    (the window once stopped short, losing 1/16 of an edge pixel's gradient)."""
    torch.manual_seed(0)
    x = torch.randn(*shape)
    out_shape = shape[:2] + ((size,) if isinstance(size, int) else size)
    grad = torch.randn(*out_shape)
    grads = []
    for device in ("cpu", "axon"):
        xi = x.detach().to(device).requires_grad_()
        F.interpolate(xi, size=size, mode=mode, align_corners=align_corners).backward(grad.to(device))
        grads.append(xi.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0], atol=1e-4, rtol=1e-4)
