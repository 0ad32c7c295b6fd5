"""Compiled flat float32 pointwise kernels on eight-lane vectors (torch_axon/inductor/vectorize.py).

Each unary and binary pointwise OpInfo is compiled alone on 1,007 float32 elements (random values
and NaN, +-inf, +-0, a subnormal; not a multiple of the sixteen lanes of a work-item, so the last
work-item shares lanes with the one before and stores only its own) and compared with eager CPU.
Where the kernel is not vectorised (an op with no vector form in the pointwise table) the case
skips, saying so; a handful of ops must vectorise. `make test` runs those, `make test-slow`
every op.
"""

from __future__ import annotations

import pytest
import torch
from torch._inductor.utils import run_and_get_code
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.opinfo.core import BinaryUfuncInfo, UnaryUfuncInfo

pytestmark = pytest.mark.skipif(
    not torch.axon.get_device_properties(0).is_cpu,
    reason="compiled kernels run in vector lanes on CPU devices only (one element a work-item on GPUs)",
)

# Ops that must take the vector path: library vector math (tanh, exp, log, sin, erf, pow),
# straight-line math (sigmoid, softplus), a select (hardtanh), two operands (div, maximum).
MUST_VECTORISE = {"tanh", "sigmoid", "exp", "log", "sin", "erf", "pow", "div", "maximum", "abs",
                  "nn.functional.softplus", "nn.functional.hardtanh", "nn.functional.relu"}  # fmt: skip

# Inductor's own decompositions that differ from eager CPU at special values, vectorised or not
# (tests/test_special_values.py lists them too).
UPSTREAM = {
    "nn.functional.softshrink": "Inductor's decomposition of softshrink gives 0, not NaN, for NaN",
    "floor_divide": "Inductor's decomposition of floor_divide differs from eager at infinities",
}


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    special = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-40, 0.5]
    a = torch.cat([torch.randn(1000, generator=g) * 3, torch.tensor(special)])
    b = torch.cat([torch.randn(1000, generator=g) * 3 + 0.1, torch.tensor([1.0, 2.0, -1.0, 0.0, -0.0, 3.0, 0.25])])
    return a, b


def _ops() -> list:
    out = []
    for op in op_db:
        if not isinstance(op, (UnaryUfuncInfo, BinaryUfuncInfo)) or torch.float32 not in op.supported_dtypes("cpu"):
            continue
        if op.name.startswith("jiterator") or op.name in ("frexp", "fill", "chalf", "nn.functional.prelu"):
            continue
        marks = () if op.name in MUST_VECTORISE else (pytest.mark.slow,)
        out.append(
            pytest.param(op, id=op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""), marks=marks)
        )
    return out


@pytest.mark.parametrize("op", _ops())
def test_vectorised_kernel_matches_cpu(op):
    a, b = _inputs()
    args = (a, b) if isinstance(op, BinaryUfuncInfo) else (a,)
    try:
        expected = op.op(*args)
    except (TypeError, RuntimeError) as e:
        pytest.skip(f"{op.name} needs more than its operands: {e}")
    torch._dynamo.reset()
    got, codes = run_and_get_code(torch.compile(lambda *t: op.op(*t)), *(t.to("axon") for t in args))
    vectorised = any("vload8" in code for code in codes)
    if op.name in MUST_VECTORISE:
        assert vectorised, f"{op.name}: the compiled kernel did not run on float8\n{codes}"
    elif not vectorised:
        pytest.skip(f"{op.name}: the compiled kernel keeps scalar lanes (no vector form for one of its ops)")
    if op.name in UPSTREAM:
        pytest.skip(UPSTREAM[op.name])
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-5, atol=1e-5, equal_nan=True)


def _compiled_code(fn, *args) -> tuple[object, str]:
    torch._dynamo.reset()
    out, codes = run_and_get_code(torch.compile(fn), *args)
    return out, "\n".join(codes)


@pytest.mark.parametrize("n", [16, 17, 31, 40, 1000])
def test_lanes_a_work_item_shares_are_stored_once(n):
    # In place: the last work-item computes lanes the one before owns again; were it to store
    # them, they would be doubled twice.
    x = torch.arange(n, dtype=torch.float32)
    y = x.to("axon")
    _, code = _compiled_code(lambda t: t.mul_(2.0).add_(1.0), y)
    assert "vload8" in code
    torch.testing.assert_close(y.cpu(), x * 2 + 1, rtol=0, atol=0)


def test_broadcast_operand_and_mask_select():
    a, b = _inputs()
    row = torch.tensor([0.75])

    def fn(x, y, r):
        return torch.where(x > y, torch.tanh(x), torch.sigmoid(y) * r)

    got, code = _compiled_code(fn, a.to("axon"), b.to("axon"), row.to("axon"))
    assert "vload8" in code and "int8" in code
    torch.testing.assert_close(got.cpu(), fn(a, b, row), rtol=1e-5, atol=1e-6, equal_nan=True)


def test_other_dtypes_keep_scalar_lanes():
    x = torch.randn(1000, dtype=torch.bfloat16)
    got, code = _compiled_code(lambda t: torch.tanh(t) * 2, x.to("axon"))
    assert "vload8" not in code
    torch.testing.assert_close(got.cpu(), torch.tanh(x) * 2)
