"""The vector forms' math (kernels/ew_common.cl EW_VEC, sin/cos/fmod of elementwise.cl) against
float64 over each op's domain, with the special values inside whole vectors: never more than a
few ulp, and never much worse than PyTorch's CPU where the CPU itself is coarse."""

import pytest

from torch_axon.bench import accuracy

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
