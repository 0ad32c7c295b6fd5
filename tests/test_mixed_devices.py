"""Tensors on different devices (issue 24, section 2): every OpInfo op given a CPU `out=` tensor or
a CPU argument raises, or, where CUDA accepts the mix (ops marked NoCheck in PyTorch's
native_functions.yaml, views, compositions that copy across devices), gives the CPU's result. A
CPU `out=` tensor is never written when the call raises. Ops whose CUDA kernels check devices
raise CUDA's own message, naming both devices and the argument (csrc/device/device_check.h)."""

import functools

import pytest
import torch

DEV = "axon"

# out= on the CPU that works, as on CUDA: compositions whose out= path copies the result in
# (CompositeExplicitAutograd: mode; torch.lu's Python wrapper; addr composed of mul and add),
# bernoulli (NoCheck), histogram (no CUDA kernel; Axon composes it).
OUT_ACROSS_DEVICES = {"addr", "lu", "mode", "bernoulli", "histogram"}


@functools.cache
def _ops():
    from torch.testing._internal.common_methods_invocations import op_db

    return [op for op in op_db if torch.float32 in op.supported_dtypes("cpu")]


def _key(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _sample(op):
    try:
        samples = op.sample_inputs(DEV, torch.float32)
        return next((s for s in samples if isinstance(s.input, torch.Tensor) and s.input.numel() > 1), None)
    except Exception as error:  # an op without float32 samples here
        pytest.skip(f"{_key(op)}: no sample ({type(error).__name__})")


def _cpu_like(x):
    if isinstance(x, torch.Tensor):
        return torch.full_like(x, 7, device="cpu") if x.dtype != torch.bool else torch.ones_like(x, device="cpu")
    if isinstance(x, (tuple, list)):
        return type(x)(_cpu_like(e) for e in x)
    return x


def _tensors(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for e in x for t in _tensors(e)]
    return []


def _to_cpu(x):
    if isinstance(x, torch.Tensor):
        return x.cpu()
    if isinstance(x, (tuple, list)):
        return type(x)(_to_cpu(e) for e in x)
    if isinstance(x, dict):
        return {k: _to_cpu(v) for k, v in x.items()}
    return x


OUT_OPS = [op for op in _ops() if op.supports_out]


@pytest.mark.parametrize("op", OUT_OPS, ids=_key)
def test_cpu_out_raises_and_is_not_written(op):
    sample = _sample(op)
    if sample is None:
        pytest.skip(f"{_key(op)}: no sample with elements")
    try:
        expected = op(sample.input, *sample.args, **sample.kwargs)
    except Exception as error:
        pytest.skip(f"{_key(op)}: the sample does not run on axon ({type(error).__name__})")
    out = _cpu_like(expected)
    before = [t.clone() for t in _tensors(out)]
    if _key(op) in OUT_ACROSS_DEVICES:
        result = op(sample.input, *sample.args, out=out, **sample.kwargs)
        if not op.name == "bernoulli":  # random values: only the call is checked
            torch.testing.assert_close(_to_cpu(result), _to_cpu(expected), equal_nan=True)
        return
    with pytest.raises((RuntimeError, ValueError, NotImplementedError, TypeError)):
        op(sample.input, *sample.args, out=out, **sample.kwargs)
    for old, new in zip(before, _tensors(out), strict=True):
        assert torch.equal(old, new), f"{_key(op)} wrote into the CPU out= tensor before raising"


ARG_OPS = [op for op in _ops()]


@pytest.mark.parametrize("op", ARG_OPS, ids=_key)
def test_cpu_argument_raises_or_equals_cpu(op):
    sample = _sample(op)
    if sample is None:
        pytest.skip(f"{_key(op)}: no sample with elements")
    args, kwargs = list(sample.args), dict(sample.kwargs)
    where = next((i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.dim() > 0), None)
    if where is not None:
        args[where] = args[where].cpu()
    else:
        where = next((k for k, a in kwargs.items() if isinstance(a, torch.Tensor) and a.dim() > 0), None)
        if where is None:
            pytest.skip(f"{_key(op)}: the sample has one tensor")
        kwargs[where] = kwargs[where].cpu()
    if op.name in {"bernoulli", "multinomial"} or "dropout" in op.name or op.name.startswith("rand"):
        pytest.skip(f"{_key(op)}: random values")
    try:
        result = op(sample.input, *args, **kwargs)
    except (RuntimeError, ValueError, NotImplementedError, TypeError, IndexError) as error:
        message = str(error)
        assert "device" in message or "CPU" in message or "cpu" in message, message
        assert "INTERNAL ASSERT" not in message, message
        if "device" in message.lower():  # a device error names both devices, as CUDA's do
            assert "axon" in message and "cpu" in message.lower(), message
        return
    expected = op(sample.input.cpu(), *_to_cpu(args), **_to_cpu(kwargs))
    torch.testing.assert_close(_to_cpu(result), expected, equal_nan=True, atol=1e-4, rtol=1e-4, check_device=False)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda x: torch.cat([x, x], out=torch.empty(6, 4)), "out"),
        (lambda x: torch.mm(x, torch.randn(4, 2)), "mat2"),
        (lambda x: torch.index_select(x, 0, torch.tensor([0, 1])), "index"),
        (lambda x: torch.gather(x, 1, torch.zeros(3, 1, dtype=torch.long)), "index"),
        (lambda x: torch.sort(x, out=(torch.empty(3, 4), torch.empty(3, 4, dtype=torch.long))), "values"),
        (lambda x: torch.topk(x, 2, out=(torch.empty(3, 2), torch.empty(3, 2, dtype=torch.long))), "values"),
        (lambda x: torch.fft.fft(x, out=torch.empty(3, 4, dtype=torch.complex64)), "out"),
        (lambda x: torch.exp(x, out=torch.empty(3, 4)), None),
        # Structured ops whose meta function compared devices first (or asserted) before Axon
        # registered their functional forms (csrc/ops/linalg.cpp).
        (lambda x: torch.linalg.solve(x[:, :3] + 4 * torch.eye(3, device=DEV), torch.randn(3, 2)), "B"),
        (lambda x: torch.triangular_solve(x, torch.eye(3)), "A"),
        (lambda x: torch.linalg.ldl_solve(*torch.linalg.ldl_factor(torch.eye(3, device=DEV)), torch.randn(3, 2)), "B"),
    ],
    ids=[
        "cat_out",
        "mm",
        "index_select",
        "gather",
        "sort_out",
        "topk_out",
        "fft_out",
        "exp_out",
        "linalg_solve",
        "triangular_solve",
        "ldl_solve",
    ],
)
def test_cuda_message_names_both_devices(call, argument):
    x = torch.randn(3, 4, device=DEV)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device") as error:
        call(x)
    assert "axon:0" in str(error.value) and "cpu" in str(error.value)
    if argument is not None:
        assert f"argument {argument} " in str(error.value)
