"""The vector forms' math (kernels/ew_common.cl EW_VEC, sin/cos/fmod of elementwise.cl) against
float64 over each op's domain, with the special values inside whole vectors: never more than a
few ulp, and never much worse than PyTorch's CPU where the CPU itself is coarse."""

import pytest

from torch_axon.tools.bench import accuracy

ROWS = {r["op"]: r for r in accuracy.measure(n=1 << 14)}


@pytest.mark.parametrize("op", sorted(ROWS))
def test_vector_math_error(op):
    r = ROWS[op]
    bound = max(6.0, 2.0 * r["cpu_max_ulp"] + 1.0)
    # Where results approach zero by cancellation (gelu's far tail: x (1 + erf x) / 2) the CPU's
    # ulp figure explodes too; there the absolute error must be of the CPU's order (Axon's
    # rational erf: 8.6e-7 against the CPU's 3.6e-7).
    close_as_cpu = r["cpu_max_ulp"] > 1e3 and r["axon_max_abs"] <= 4.0 * r["cpu_max_abs"]
    assert r["axon_max_ulp"] <= bound or close_as_cpu, f"{op}: {r['axon_max_ulp']:.3g} ulp at {r['worst_at']}"
    assert r["nan_differs"] <= r["cpu_nan_differs"], f"{op}: NaN where float64 has a number"


# The strided program's vector form (rows of contiguous or broadcast operands) and the vector
# predicates, where and NaN-keeping activations, against the CPU element for element.
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

SPECIALS = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-40, -3.0, 3.0, 0.5]
SHAPES = [((1000,), (1000,)), ((64, 1000), (1000,)), ((64, 1000), (64, 1)), ((3, 5, 130), (5, 1)), ((7, 13), (13,))]
FUNCTIONS = {
    "mul": torch.mul,
    "atan2": torch.atan2,
    "maximum": torch.maximum,
    "eq": torch.eq,
    "lt": torch.lt,
    "where": lambda a, b: torch.where(a > b, a, b),
    "where scalar": lambda a, b: torch.where(b > 0, a, 2.0),
    "sign": lambda a, b: torch.sign(a + b),
    "hardsigmoid": lambda a, b: F.hardsigmoid(a * b),
    "hardswish": lambda a, b: F.hardswish(a * b),
    "nan_to_num": lambda a, b: torch.nan_to_num(a * b, 1.0, 2.0, -3.0),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_vector_forms_broadcast(name, shapes, dtype):
    g = torch.Generator().manual_seed(0)
    a = torch.randn(shapes[0], generator=g) * 4
    a.view(-1)[: len(SPECIALS)] = torch.tensor(SPECIALS)
    a, b = a.to(dtype), torch.randn(shapes[1], generator=g).to(dtype)
    fn = FUNCTIONS[name]
    expected, got = fn(a, b), fn(a.to("axon"), b.to("axon")).cpu()
    assert got.dtype == expected.dtype
    if name == "atan2":  # the library's vector atan2 is within an ulp or two of the CPU's
        torch.testing.assert_close(got, expected, equal_nan=True)
    else:
        assert torch.equal(got.isnan(), expected.isnan()) and torch.equal(got.nan_to_num(), expected.nan_to_num())


def test_hardsigmoid_keeps_nan():
    x = torch.tensor([float("nan"), -4.0, 0.0, 4.0])
    assert torch.equal(F.hardsigmoid(x.to("axon")).cpu().isnan(), torch.tensor([True, False, False, False]))
