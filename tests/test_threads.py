"""Several Python threads issuing ops at once (issue 24, section 5): each on its own stream, and
all on one, with allocation, frees, program builds (a fresh user kernel per thread), a
compiled function and the profiler active; every result equals the serial run's."""

import threading
import uuid

import pytest
import torch

import torch_axon  # noqa: F401

THREADS = 4
ROUNDS = 20


SCALE = "__kernel void scale(__global float *x, float s, long n) { long i = get_global_id(0); if (i < n) x[i] *= s; }"


def _work(seed: int, compiled_fn) -> list[torch.Tensor]:
    # A fresh program each call: in the threaded run its build overlaps the others' launches.
    lib = torch.axon.compile_shader(f"// {uuid.uuid4()}\n{SCALE}")
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(64, 48, generator=g).to("axon")
    b = torch.randn(48, 32, generator=g).to("axon")
    out = []
    for r in range(ROUNDS):
        h = torch.softmax(a @ b, dim=-1) * (r + 1)
        h = h + torch.randn(64, 32, generator=g).to("axon")  # a host copy and an allocation
        lib.scale(h, 0.5, h.numel())
        out.append(compiled_fn(h).sum(dim=0).cpu())
    return out


def _compiled():
    return torch.compile(lambda t: torch.relu(t * 2 - 0.1))


@pytest.mark.parametrize("streams", ["own", "shared"])
def test_threads_match_the_serial_run(streams):
    compiled = _compiled()
    serial = [_work(seed, compiled) for seed in range(THREADS)]
    results, errors = [None] * THREADS, []

    def run(k: int) -> None:
        try:
            if streams == "own":
                with torch.axon.stream(torch.axon.Stream()):
                    results[k] = _work(k, compiled)
            else:
                results[k] = _work(k, compiled)
        except Exception as e:  # noqa: BLE001 - reported below with its thread
            errors.append((k, repr(e)))

    with torch.profiler.profile():
        threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors
    for k in range(THREADS):
        for got, want in zip(results[k], serial[k], strict=True):
            torch.testing.assert_close(got, want)
