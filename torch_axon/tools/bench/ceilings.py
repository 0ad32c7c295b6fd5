"""The machine's own limits, measured in the same run as the workloads they judge.

- copy bandwidth: memcpy on the host (one thread, and PyTorch's threaded CPU copy), and on the
  device a copy kernel and the driver's buffer copy;
- the host BLAS's SGEMM rate (the OpenBLAS that Axon's CPU-class matmul path calls);
- kernel launch latency: the runtime's smallest launch without PyTorch's dispatcher, queued
  back to back and with a synchronisation after each.
Bandwidths count bytes read plus bytes written.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import torch

from torch_axon import _C

from .timing import compare

COPY_ELEMENTS = 40_000_000


def _gbps(nbytes: float, seconds: float) -> float:
    return nbytes / seconds / 1e9


def copy_bandwidth(n: int, repeats: int, sample_s: float) -> dict[str, float]:
    src_h, dst_h = torch.rand(n), torch.empty(n)
    src_d, dst_d = src_h.to("axon"), torch.empty(n, device="axon")
    nbytes = src_h.numel() * src_h.element_size()
    memmove = ctypes.memmove
    runs = {
        "host memcpy (1 thread)": (lambda: memmove(dst_h.data_ptr(), src_h.data_ptr(), nbytes), "cpu"),
        "host copy (PyTorch CPU, all threads)": (lambda: dst_h.copy_(src_h), "cpu"),
        "device copy kernel": (lambda: _C._copy_kernel(dst_d, src_d), "axon"),
        "device buffer copy (driver)": (lambda: dst_d.copy_(src_d), "axon"),
    }
    timings = compare(runs, repeats, sample_s)
    return {label: _gbps(2 * nbytes, t.median) for label, t in timings.items()}


def _openblas() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("openblas")
    return ctypes.CDLL(name) if name else None


def host_sgemm(sizes: list[int], repeats: int, sample_s: float) -> dict[int, float]:
    """GFLOP/s of cblas_sgemm (row-major C = A B) on the host BLAS, per size."""
    blas = _openblas()
    if blas is None:
        return {}
    sgemm = blas.cblas_sgemm
    row_major, no_trans = 101, 111
    rates = {}
    for n in sizes:
        a, b, c = torch.rand(n, n), torch.rand(n, n), torch.empty(n, n)
        args = [ctypes.c_void_p(t.data_ptr()) for t in (a, b, c)]

        def call(n=n, args=args):
            sgemm(row_major, no_trans, no_trans, n, n, n, ctypes.c_float(1.0), args[0], n, args[1], n,
                  ctypes.c_float(0.0), args[2], n)  # fmt: skip

        timing = compare({"blas": (call, "cpu")}, repeats, sample_s)["blas"]
        rates[n] = 2 * n**3 / timing.median / 1e9
    return rates


def launch_latency(repeats: int) -> dict[str, float]:
    """Microseconds per launch: queued (enqueue rate) and launch + synchronisation."""
    one = torch.zeros(1, device="axon")
    _C._launch_latency(one, 100, False)  # builds the kernel
    queued = sorted(_C._launch_latency(one, 2000, False) for _ in range(repeats))
    synced = sorted(_C._launch_latency(one, 200, True) for _ in range(repeats))
    return {
        "queued launch (us)": queued[len(queued) // 2] * 1e6,
        "launch + synchronize (us)": synced[len(synced) // 2] * 1e6,
    }


def measure(quick: bool, repeats: int, sample_s: float) -> dict:
    n = 1_000_000 if quick else COPY_ELEMENTS
    copies = copy_bandwidth(n, repeats, sample_s)
    sgemm = host_sgemm([256] if quick else [256, 512, 1024, 2048], repeats, sample_s)
    return {
        "copy_elements": n,
        "copy_gbps": copies,
        # The bar elementwise kernels are held to: the fastest copy any path managed.
        "copy_ceiling_gbps": max(copies.values()),
        "host_sgemm_gflops": {str(k): v for k, v in sgemm.items()},
        "launch": launch_latency(repeats),
    }
