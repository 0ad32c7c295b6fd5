"""torch.axon.compile_shader, ElementwiseKernel and ReductionKernel (torch_axon/kernels/):
results against PyTorch on the CPU, argument rules and errors."""

import pytest
import torch

import torch_axon  # noqa: F401
from torch_axon.kernels import ElementwiseKernel, ReductionKernel, compile_shader

AXPY = """
__kernel void axpy(__global float *y, __global const float *x, float a, long n) {
    long i = get_global_id(0);
    if (i < n) y[i] += a * x[i];
}"""


@pytest.fixture(scope="module")
def axpy():
    return torch.axon.compile_shader(AXPY)


def test_axpy_matches_cpu(axpy):
    x, y = torch.randn(1000), torch.randn(1000)
    yd = y.to("axon")
    axpy.axpy(yd, x.to("axon"), 2.0, y.numel(), threads=y.numel())
    torch.testing.assert_close(yd.cpu(), y + 2.0 * x)


def test_storage_offset_and_default_threads(axpy):
    """A view starting inside its storage arrives as a pointer to its own first element."""
    base_y, base_x = torch.randn(300), torch.randn(300)
    yd, xd = base_y.to("axon"), base_x.to("axon")
    axpy.axpy(yd[100:200], xd[7:107], -0.5, 100)  # threads: the first tensor's numel
    expected = base_y.clone()
    expected[100:200] += -0.5 * base_x[7:107]
    torch.testing.assert_close(yd.cpu(), expected)


def test_orders_with_builtin_ops_on_a_stream(axpy):
    s = torch.axon.Stream()
    x = torch.ones(4096, device="axon")
    # x is written on the default stream: s waits for it (streams run concurrently where the
    # driver has a thread per queue, as Mesa's rusticl does).
    s.wait_stream(torch.axon.current_stream())
    with torch.axon.stream(s):
        y = torch.zeros(4096, device="axon") + 1.0
        axpy.axpy(y, x, 3.0, y.numel())
        z = y * 2
    s.synchronize()
    torch.testing.assert_close(z.cpu(), torch.full((4096,), 8.0))


def test_two_dimensional_grid_local_memory_and_options():
    # double where the device has it (Mesa's rusticl on llvmpipe has no cl_khr_fp64)
    fp64 = torch.axon.get_device_properties(0).has_fp64
    c_type, dtype = ("double", torch.float64) if fp64 else ("float", torch.float32)
    lib = compile_shader(
        """
__kernel void row_sums(__global const T *x, __global T *out, __local T *scratch, int cols) {
    int row = get_global_id(1), lane = get_local_id(0), width = get_local_size(0);
    T acc = 0;
    for (int c = lane; c < cols; c += width) acc += x[row * cols + c];
    scratch[lane] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane == 0) {
        T total = 0;
        for (int k = 0; k < width; k++) total += scratch[k];
        out[row] = total;
    }
}""",
        options=f"-DT={c_type}",
    )
    x = torch.randn(6, 50, dtype=dtype)
    out = torch.empty(6, dtype=dtype, device="axon")
    lib.row_sums(x.to("axon"), out, 8 * 8, 50, threads=(8, 6), group_size=(8, 1))
    torch.testing.assert_close(out.cpu(), x.sum(1))


def test_vector_and_unsigned_numbers():
    lib = compile_shader(
        """
__kernel void affine(__global float4 *v, float4 scale, uint offset) {
    size_t i = get_global_id(0);
    v[i] = v[i] * scale + (float)offset;
}"""
    )
    v = torch.randn(10, 4)
    vd = v.to("axon")
    lib.affine(vd, (1.0, 2.0, 3.0, 4.0), 7, threads=10)
    torch.testing.assert_close(vd.cpu(), v * torch.tensor([1.0, 2.0, 3.0, 4.0]) + 7)


def test_kernel_limits_and_names(axpy):
    assert axpy.kernel_names == ("axpy",)
    assert axpy.axpy.max_threads_per_group >= 1
    assert axpy.axpy.preferred_group_multiple >= 1
    assert axpy.axpy.local_mem_bytes >= 0
    assert "axpy" in dir(axpy)
    with pytest.raises(AttributeError, match="axpy"):
        _ = axpy.nope


def test_build_error_shows_the_log_with_source_lines():
    with pytest.raises(RuntimeError) as info:
        compile_shader("__kernel void broken(__global float *x) {\n  x[0] = undefined_name;\n}")
    message = str(info.value)
    assert "undefined_name" in message
    assert ":2:" in message  # the source's own line


def test_argument_errors(axpy):
    y = torch.zeros(8, device="axon")
    with pytest.raises(TypeError, match="4 arguments"):
        axpy.axpy(y, y, 1.0)
    with pytest.raises(TypeError, match="argument x"):
        axpy.axpy(y, 1.0, 1.0, 8)
    with pytest.raises(TypeError, match="argument a"):
        axpy.axpy(y, y, y, 8)
    with pytest.raises(TypeError, match="argument n.*integer"):
        axpy.axpy(y, y, 1.0, 8.5)
    with pytest.raises(ValueError, match="cpu"):
        axpy.axpy(y, torch.zeros(8), 1.0, 8)
    with pytest.raises(TypeError, match="points to float.*torch.int64"):
        axpy.axpy(y, torch.zeros(8, dtype=torch.long, device="axon"), 1.0, 8)
    with pytest.raises(ValueError, match="whole number of groups"):
        axpy.axpy(y, y, 1.0, 8, threads=8, group_size=3)


def test_profiler_names_the_kernel_with_device_time(axpy):
    from torch.profiler import ProfilerActivity, profile

    y = torch.zeros(1 << 16, device="axon")
    axpy.axpy(y, y, 1.0, y.numel())
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        axpy.axpy(y, y, 1.0, y.numel())
        torch.axon.synchronize()
    (event,) = [e for e in prof.events() if e.name == "axpy" and e.device_type != torch.autograd.DeviceType.CPU]
    assert event.device_time_total > 0


def test_elementwise_kernel_broadcast_scalars_and_dtypes():
    k = ElementwiseKernel("T x, T y, T w", "T z", "z = x * y + w;", "test_fma")
    x, y = torch.randn(4, 1, 5), torch.randn(3, 1)
    for dtype in (torch.float32, torch.float64, torch.float16, torch.int32):
        xd, yd = x.to(dtype), y.to(dtype)
        z = k(xd.to("axon"), yd.to("axon"), 2)
        assert z.dtype == dtype and z.device.type == "axon"
        # Half types compute in float and round once, as Axon's built-in pointwise ops do.
        expected = (xd.double() * yd.double() + 2).to(dtype)
        torch.testing.assert_close(z.cpu(), expected)
    # Strided input (a transpose) and an out= tensor.
    a = torch.randn(64, 48)
    out = torch.empty(48, 64, device="axon")
    k(a.to("axon").t(), 0.5, a.t().contiguous().to("axon"), out=out)
    torch.testing.assert_close(out.cpu(), a.t() * 0.5 + a.t())


def test_elementwise_kernel_vector_and_branching_bodies():
    """A body with a branch does not compile on float8: it keeps the scalar kernels."""
    smooth = ElementwiseKernel("float x", "float y", "y = x > 0 ? x : exp(x) - 1.0f;", "test_elu")
    branchy = ElementwiseKernel("float x", "float y", "if (x > 0) y = x; else y = exp(x) - 1.0f;", "test_elu_if")
    x = torch.randn(1003)  # a partial last vector
    for k in (smooth, branchy):
        torch.testing.assert_close(k(x.to("axon")).cpu(), torch.nn.functional.elu(x))


def test_elementwise_kernel_is_an_op():
    k = ElementwiseKernel("T x", "T y", "y = x * x;", "test_square")
    assert k.op._schema.name == "axon_kernels::test_square"
    x = torch.randn(10, device="axon")
    torch.testing.assert_close(torch.ops.axon_kernels.test_square(x).cpu(), x.cpu() ** 2)


def test_elementwise_kernel_errors():
    with pytest.raises(ValueError, match="same type"):
        ElementwiseKernel("float x, int n", "float y", "y = x * n;", "test_mixed")
    with pytest.raises(ValueError, match="1 to 3 inputs"):
        ElementwiseKernel("T a, T b, T c, T d", "T y", "y = a;", "test_four")
    bad = ElementwiseKernel("float x", "float y", "y = nonsense(x);", "test_bad")
    with pytest.raises(RuntimeError, match="nonsense"):
        bad(torch.ones(3, device="axon"))
    k = ElementwiseKernel("T x", "T y", "y = x;", "test_copy")
    with pytest.raises(ValueError, match="cpu"):
        k(torch.ones(3))


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, False)])
def test_reduction_kernel_l2_norm(dim, keepdim):
    l2 = ReductionKernel(
        "T x", "T y", map_expr="x * x", reduce_expr="a + b", identity="0", name="test_l2", post_map_expr="y = sqrt(a)"
    )
    x = torch.randn(5, 300, 7)
    got = l2(x.to("axon"), dim=dim, keepdim=keepdim)
    expected = torch.linalg.vector_norm(x, dim=dim, keepdim=keepdim)
    torch.testing.assert_close(got.cpu(), expected)


def test_reduction_kernel_two_inputs_long_rows_and_types():
    dot = ReductionKernel("T x, T y", "T z", map_expr="x * y", reduce_expr="a + b", identity="0", name="test_dot")
    amax = ReductionKernel("T x", "T y", map_expr="fabs(x)", reduce_expr="fmax(a, b)", identity="0", name="test_amax")
    x, y = torch.randn(3, 100_000, dtype=torch.float64), torch.randn(100_000, dtype=torch.float64)
    torch.testing.assert_close(dot(x.to("axon"), y.to("axon"), dim=1).cpu(), (x * y).sum(1))
    h = torch.randn(2, 333).half()
    got = amax(h.to("axon"), dim=1)
    assert got.dtype == torch.float16
    torch.testing.assert_close(got.cpu(), h.abs().amax(1))
    count = ReductionKernel(
        "int x", "long n", map_expr="x != 0", reduce_expr="a + b", identity="0", name="test_count", reduce_type="long"
    )
    ints = torch.randint(-2, 3, (4, 50), dtype=torch.int32)
    torch.testing.assert_close(count(ints.to("axon"), dim=1).cpu(), (ints != 0).sum(1))


def test_device_properties_for_kernel_authors():
    props = torch.axon.get_device_properties()
    assert props.max_work_group_size >= 1 and props.local_mem_size > 0
    assert props.preferred_vector_width["float"] >= 1 and props.native_vector_width["float"] >= 1
    assert props.max_work_item_sizes[0] >= 1
    assert isinstance(props.extensions, tuple)


def test_reduction_kernel_under_compile_is_one_node():
    from torch._inductor.utils import run_and_get_code

    sumsq = ReductionKernel("T x", "T y", map_expr="x * x", reduce_expr="a + b", identity="0", name="test_sumsq")
    x = torch.randn(8, 100)
    torch._dynamo.reset()
    torch.axon.fallback_ops(reset=True)
    got, codes = run_and_get_code(torch.compile(lambda t: sumsq(t + 1, dim=1) * 2, fullgraph=True), x.to("axon"))
    assert "axon_kernels.test_sumsq.default" in "\n".join(codes)
    assert not torch.axon.fallback_ops()
    torch.testing.assert_close(got.cpu(), ((x + 1) ** 2).sum(1) * 2)


def test_programs_are_cached_on_disk(tmp_path):
    """A second process finds the built program in the disk cache and builds nothing."""
    import os
    import subprocess
    import sys
    import uuid

    script = f"""
import torch, torch_axon
y = torch.ones(4, device="axon")
before = torch.axon.kernel_cache_stats()
lib = torch.axon.compile_shader('// {uuid.uuid4()}\\n' + {AXPY!r})
lib.axpy(y, y, 1.0, 4)
after = torch.axon.kernel_cache_stats()
print(after["builds"] - before["builds"], after["disk_hits"] - before["disk_hits"], y.sum().item())
"""
    env = {**os.environ, "AXON_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second = (run.stdout.split() for run in runs)
    assert first[0] != "0" and first[2] == "8.0"  # built, and it ran
    assert second[:2] == ["0", "1"] and second[2] == "8.0"  # loaded from disk, and it ran


def test_required_group_size_empty_tensors_and_tensor_numbers():
    lib = compile_shader(
        """
__kernel __attribute__((reqd_work_group_size(16, 1, 1)))
void fill(__global float *out, __global const float *maybe, float4 v) {
    size_t i = get_global_id(0);
    out[i] = (maybe ? maybe[0] : -1.0f) + v.x + v.y + v.z + v.w;
}"""
    )
    out = torch.empty(32, device="axon")
    # The group the kernel requires, without group_size=; an empty tensor arrives as NULL; a
    # float4 from a CPU tensor of four numbers.
    lib.fill(out, torch.empty(0, device="axon"), torch.tensor([1.0, 2.0, 3.0, 4.0]), threads=32)
    torch.testing.assert_close(out.cpu(), torch.full((32,), 9.0))
    lib.fill(out, torch.full((1,), 5.0, device="axon"), (0.0, 0.0, 0.0, 0.0), threads=32)
    torch.testing.assert_close(out.cpu(), torch.full((32,), 5.0))
    with pytest.raises(ValueError, match="whole number of groups"):
        lib.fill(out, out, (0.0,) * 4, threads=24)
