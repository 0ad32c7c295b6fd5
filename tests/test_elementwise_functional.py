"""The functional and in-place forms of structured pointwise ops that Axon registers with a fast
path (csrc/ops/elementwise_functional.cpp): contiguous floating operands of one shape skip
PyTorch's meta function; everything else goes to the op's own composite kernel. Both paths are
checked against the CPU: values, dtype, shape and strides, errors, in-place identity."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from conftest import DEVICE, compare

pytestmark = pytest.mark.usefixtures("no_fallback")

SOURCE = Path(__file__).resolve().parents[1] / "csrc" / "ops" / "elementwise_functional.cpp"


def _forms() -> list[tuple[str, int]]:
    """(ATen overload, tensor operands) of every form the file registers, read from its macros."""
    forms = []
    macro = r"\n  (ALPHA|BINARY|BINARY_FUNCTIONAL|BINARY_INPLACE|UNARY)\(([^;]*)\);"
    for kind, args in re.findall(macro, SOURCE.read_text()):
        a = [x.strip().strip('"') for x in args.split(",")]
        if a[0] == "row":
            continue  # a macro's own definition
        if kind == "UNARY":
            forms += [(a[1], 1), (a[1] + "_", 1)]
        elif kind == "ALPHA":
            forms += [(a[1] + ".Tensor", 2), (a[1] + "_.Tensor", 2)]
        elif kind == "BINARY":
            forms += [(a[1] + a[2], 2), (a[1] + "_" + a[2], 2)]
        else:
            forms.append((a[2], 2))
    return forms


FORMS = _forms()


def _op(form: str):
    name, _, overload = form.partition(".")
    return getattr(getattr(torch.ops.aten, name), overload or "default")


def test_every_fast_form_is_a_structured_op_axon_registers():
    """The slow path calls the op's CompositeExplicitAutogradNonFunctional kernel: only structured
    ops have one (a CompositeImplicitAutograd op registered for a backend would lose its
    autograd formula)."""
    assert len(FORMS) > 100
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    for form, _ in FORMS:
        assert has(f"aten::{form}", "CompositeExplicitAutogradNonFunctional"), form
        assert has(f"aten::{form}", "PrivateUse1"), form


def _inputs(shape, dtype, tensors: int, strides: str = "standard") -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(len(shape) * 7 + tensors)
    out = []
    for k in range(tensors):
        t = (torch.rand(shape, generator=g) * 1.6 + 0.2 + 0.3 * k).to(dtype)  # (0.2, 2.1): most ops finite
        if strides == "transposed" and t.dim() >= 2:
            t = t.transpose(0, 1).contiguous().transpose(0, 1)
        out.append(t)
    return out


def _check(form: str, cpu_args: list, axon_args: list, cpu_scalar: bool = False):
    op = _op(form)
    inplace = form.split(".")[0].endswith("_")
    if inplace:
        cpu_args = [cpu_args[0].clone(), *cpu_args[1:]]
        axon_args = [axon_args[0].clone(), *axon_args[1:]]
    try:
        expected = op(*cpu_args)
    except (RuntimeError, NotImplementedError):
        with pytest.raises((RuntimeError, NotImplementedError)):
            op(*axon_args)  # an error on the CPU only would be a finding
        return
    if cpu_scalar:
        try:
            got = op(*axon_args)
        except RuntimeError as e:
            # CUDA checks these ops' devices (scripts/gen_device_checks.py) and refuses a CPU
            # 0-dim tensor too; the others take it as a scalar, as TensorIterator does.
            assert "Expected all tensors to be on the same device" in str(e), form
            return
    else:
        got = op(*axon_args)
    if inplace:
        assert got is axon_args[0], form
    assert got.device.type == DEVICE
    assert (got.dtype, got.shape, got.stride()) == (expected.dtype, expected.shape, expected.stride()), form
    compare(expected, got)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 1, 5)])
def test_fast_path_matches_cpu(shape, dtype):
    """Contiguous operands of one shape and type: the fast path, every form."""
    for form, tensors in FORMS:
        cpu = _inputs(shape, dtype, tensors)
        _check(form, cpu, [t.to(DEVICE) for t in cpu])


OTHER_CASES = ["transposed", "broadcast", "int", "mixed dtypes", "cpu 0-dim tensor", "0-dim against 1-d", "empty"]


@pytest.mark.parametrize("case", [*OTHER_CASES, "size-1 stride"])
def test_other_operands_take_pytorchs_path(case):
    """Layouts, broadcasting and promotion the fast path leaves to PyTorch: same results, types
    and strides as the CPU."""
    for form, tensors in FORMS:
        inplace = form.split(".")[0].endswith("_")
        if case == "transposed":
            cpu = _inputs((3, 4), torch.float32, tensors, strides="transposed")
        elif case == "broadcast":
            cpu = _inputs((3, 4), torch.float32, tensors)
            if tensors == 2:
                cpu[1] = cpu[1][0]
        elif case == "int":
            cpu = [(t * 4).to(torch.int64) for t in _inputs((5,), torch.float32, tensors)]
        elif case == "mixed dtypes":
            if tensors == 1:
                continue
            cpu = _inputs((5,), torch.float32, tensors)
            cpu[1] = cpu[1].to(torch.float16)
        elif case == "cpu 0-dim tensor":
            if tensors == 1:
                continue
            cpu = _inputs((5,), torch.float16, tensors)
            cpu[1] = torch.tensor(1.25, dtype=torch.float32)  # a tensor, not a number: no promotion
        elif case == "0-dim against 1-d":
            if tensors == 1 or inplace:
                continue
            cpu = _inputs((5,), torch.float32, tensors)
            cpu[0] = cpu[0][0]
        elif case == "empty":
            cpu = _inputs((0, 3), torch.float32, tensors)
        else:  # a size-1 dim whose stride is not the one `empty` gives it
            cpu = _inputs((3, 3), torch.float32, tensors)
        axon = [t if case == "cpu 0-dim tensor" and k == 1 else t.to(DEVICE) for k, t in enumerate(cpu)]
        if case == "size-1 stride":
            cpu, axon = ([t.as_strided((3, 1), (1, 3)) for t in ts] for ts in (cpu, axon))
        _check(form, cpu, axon, cpu_scalar=case == "cpu 0-dim tensor")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_python_numbers_keep_the_tensor_type(dtype):
    """Wrapped Python numbers on either side (2.5 - x reaches sub with the number first)."""
    x = torch.rand(6).to(dtype) + 0.5
    ax = x.to(DEVICE)
    cases = {
        "add": lambda t: t + 2.5,
        "radd": lambda t: 2.5 + t,
        "sub": lambda t: t - 3,
        "rsub": lambda t: 2.5 - t,
        "mul": lambda t: t * 1e5,
        "div": lambda t: t / 3,
        "rdiv": lambda t: 3 / t,
        "add alpha": lambda t: torch.add(t, t, alpha=0.5),
        "sub alpha int": lambda t: torch.sub(t, t * 2, alpha=2),
        "bool number": lambda t: t * True,
    }
    for name, fn in cases.items():
        expected, got = fn(x), fn(ax)
        assert (got.dtype, got.stride()) == (expected.dtype, expected.stride()), name
        torch.testing.assert_close(got.cpu(), expected, rtol=0, atol=0, msg=name)
    # A complex number makes the result complex (PyTorch's path).
    compare(x.float() * 1j, ax.float() * 1j)


def test_in_place_forms_write_in_place_and_count_versions():
    a = torch.rand(4, 5)
    ax = a.to(DEVICE)
    ptr, version = ax.data_ptr(), ax._version
    ax.mul_(2.5).add_(ax, alpha=0.5).sigmoid_()
    a.mul_(2.5).add_(a, alpha=0.5).sigmoid_()
    assert ax.data_ptr() == ptr and ax._version == version + 3
    compare(a, ax)


def test_errors_are_pytorchs():
    x = torch.rand(3, device=DEVICE)
    with pytest.raises(RuntimeError, match="alpha must not be a complex number"):
        torch.add(x, x, alpha=1j)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported"):
        torch.sub(x, x, alpha=True)
    with pytest.raises(RuntimeError, match="must match the size"):
        x.add_(torch.rand(4, device=DEVICE))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mul(x, torch.rand(3))


def test_gradients_through_the_fast_path():
    x = torch.rand(8, requires_grad=True)
    ax = x.detach().to(DEVICE).requires_grad_()
    for t in (x, ax):
        (torch.sigmoid(t * 1.5 + 0.25) - 0.125).pow(t).sum().backward()
    compare(x.grad, ax.grad)
