"""Shared helpers for the native-op tests: every result is compared with PyTorch's CPU result.

``compare(cpu_result, axon_result)`` checks device, dtype, shape and values; ``no_fallback``
(fixture or context manager) asserts that nothing ran through Axon's counted CPU fallback;
``make_pair`` builds the same values on the CPU and on axon with a chosen memory layout.
"""

from __future__ import annotations

import contextlib
import warnings

import pytest
import torch

DEVICE = "axon"

FLOAT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INT_DTYPES = [torch.int64, torch.int32, torch.uint8]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + [torch.bool]

# Memory layouts make_pair can produce (the same view applied on both devices).
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]

# Tolerances (atol, rtol) for results computed in the given dtype. float16 / bfloat16 are
# computed in float on the device and rounded once, as PyTorch's CPU kernels mostly do too.
TOLERANCES = {
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-10, 1e-10),
    torch.float16: (1e-3, 2e-3),
    torch.bfloat16: (1e-2, 1.6e-2),
}


def tol(dtype: torch.dtype) -> dict[str, float]:
    """Keyword arguments (atol, rtol) for compare() for a result dtype; exact for integers."""
    atol, rtol = TOLERANCES.get(dtype, (0.0, 0.0))
    return {"atol": atol, "rtol": rtol}


def has_axon() -> bool:
    return hasattr(torch, "axon") and torch.axon.is_available()


def pytest_collection_modifyitems(config, items):
    if has_axon():
        return
    skip = pytest.mark.skip(reason="no axon (OpenCL) device available")
    for item in items:
        item.add_marker(skip)


# Refusals of a device's limits (NotImplementedError, message part -> skip reason): Mesa's
# rusticl on llvmpipe lacks cl_khr_fp64, so Axon refuses float64 and complex128 there, and its
# driver stops a work-item's loops after 65535 iterations, so Axon refuses ops that would loop
# longer in one work-item (runtime/src/quirks.c).
DEVICE_REFUSALS = {
    "lacks cl_khr_fp64": "the device lacks cl_khr_fp64",
    "driver's loop budget": "the driver caps a work-item's loop iterations",
}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test reaching one of Axon's refusals of the device's limits is reported as skipped for
    that reason, not failed (never on PoCL, which has neither limit)."""
    outcome = yield
    report = outcome.get_result()
    excinfo = call.excinfo
    if report.failed and excinfo is not None and excinfo.errisinstance(NotImplementedError):
        for part, reason in DEVICE_REFUSALS.items():
            if part in str(excinfo.value):
                report.outcome = "skipped"
                report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {reason}")
                break


@pytest.fixture(autouse=True)
def _seed():
    """Deterministic CPU inputs in every test."""
    torch.manual_seed(0)
    yield


def _flatten(result):
    if isinstance(result, (tuple, list)):
        out = []
        for r in result:
            out.extend(_flatten(r))
        return out
    return [result]


def compare(
    cpu_result,
    axon_result,
    atol: float | None = None,
    rtol: float | None = None,
    *,
    equal_nan: bool = True,
    check_dtype: bool = True,
) -> None:
    """Asserts that an axon result (tensor or nested tuple of tensors) matches the CPU one.

    Without atol / rtol the tolerance follows the result's dtype (exact for integers and bool).
    """
    cpu_list, axon_list = _flatten(cpu_result), _flatten(axon_result)
    assert len(cpu_list) == len(axon_list), f"{len(cpu_list)} CPU results but {len(axon_list)} axon results"
    for c, a in zip(cpu_list, axon_list, strict=True):
        if not isinstance(c, torch.Tensor):
            assert not isinstance(a, torch.Tensor) or a.device.type == "cpu", "expected a Python value"
            if isinstance(c, float) and c != c:
                assert a != a
            elif isinstance(c, float):
                assert a == pytest.approx(c, rel=rtol or 1e-6, abs=atol or 1e-6)
            else:
                assert a == c
            continue
        assert isinstance(a, torch.Tensor), f"expected a tensor, got {type(a)}"
        assert a.device.type == DEVICE, f"result is on {a.device}, not on axon"
        kw = tol(c.dtype)
        if atol is not None:
            kw["atol"] = atol
        if rtol is not None:
            kw["rtol"] = rtol
        torch.testing.assert_close(a.cpu(), c, equal_nan=equal_nan, check_dtype=check_dtype, **kw)


@contextlib.contextmanager
def native():
    """Asserts that the block runs without Axon's CPU fallback."""
    torch.axon.fallback_ops(reset=True)
    yield
    used = torch.axon.fallback_ops(reset=True)
    assert not used, f"ops fell back to the CPU: {used}"


@pytest.fixture
def no_fallback():
    """The whole test must run natively (fallback counts reset before, checked after)."""
    torch.axon.fallback_ops(reset=True)
    yield
    used = torch.axon.fallback_ops(reset=True)
    assert not used, f"ops fell back to the CPU: {used}"


@pytest.fixture
def allow_fallback():
    """For tests of ops that are not native (yet): hides the once-per-op fallback warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="axon: .* has no native kernel")
        yield
    torch.axon.fallback_ops(reset=True)


def make_cpu(shape, dtype=torch.float32, low=None, high=None, exclude_zero=False) -> torch.Tensor:
    """A CPU tensor of random values (integers in [-9, 10) unless low / high say otherwise)."""
    if dtype.is_floating_point or dtype == torch.bool:
        return torch.testing.make_tensor(
            tuple(shape), dtype=dtype, device="cpu", low=low, high=high, exclude_zero=exclude_zero
        )
    if low is None:
        low = 0 if dtype == torch.uint8 else -9
    if high is None:
        high = 10
    return torch.testing.make_tensor(
        tuple(shape), dtype=dtype, device="cpu", low=low, high=high, exclude_zero=exclude_zero
    )


def make_pair(
    shape, dtype=torch.float32, layout: str = "contiguous", low=None, high=None, exclude_zero: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """(cpu, axon) tensors with equal values and the same layout.

    layout: "contiguous"; "transposed" (last two dims swapped, so column-major); "sliced"
    (narrowed in dim 0 and a step of 2 in the last dim, so a storage offset and gaps);
    "expanded" (dim 0 broadcast from size 1, stride 0).
    """
    shape = tuple(shape)
    nd = len(shape)
    if layout == "contiguous" or nd == 0:
        base_shape, view = shape, (lambda t: t)
    elif layout == "transposed":
        if nd < 2:
            base_shape, view = shape, (lambda t: t)
        else:
            base_shape = shape[:-2] + (shape[-1], shape[-2])
            view = lambda t: t.transpose(-1, -2)  # noqa: E731
    elif layout == "sliced":
        base_shape = list(shape)
        base_shape[-1] = 2 * shape[-1] + 1
        if nd >= 2:
            base_shape[0] = shape[0] + 1

        def view(t):
            if nd >= 2:
                t = t.narrow(0, 1, shape[0])
            return t.narrow(-1, 1, 2 * shape[-1])[..., ::2]
    elif layout == "expanded":
        base_shape = (1,) + shape[1:]
        view = lambda t: t.expand(shape)  # noqa: E731
    else:
        raise ValueError(layout)
    base = make_cpu(base_shape, dtype, low, high, exclude_zero)
    cpu, ax = view(base), view(base.to(DEVICE))
    assert cpu.shape == shape and ax.shape == shape
    if layout != "contiguous" and nd >= 2 and all(s > 1 for s in shape):
        assert not ax.is_contiguous()
    return cpu, ax


def to_axon(*tensors):
    """The same tensors (same strides for dense ones) on axon."""
    out = tuple(t.to(DEVICE) if isinstance(t, torch.Tensor) else t for t in tensors)
    return out if len(out) > 1 else out[0]
