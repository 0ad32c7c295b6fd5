"""Interrupts and interpreter exit with work in flight (issue 24): SIGINT while thousands of
kernels are queued, and exit with queued work, live tensors and a thread still issuing ops,
end the process promptly and cleanly (no hang, no crash)."""

import subprocess
import sys

import pytest

QUEUE = """
import torch, torch_axon
x = torch.randn(1 << 18, device="axon")
for _ in range(4000):
    x = x * 1.0001 + 0.5
"""

CASES = {
    "sigint with queued kernels": QUEUE
    + """
import os, signal, threading, time
try:
    # The signal arrives while the main thread waits in the driver for the queued kernels, or
    # while it queues more (fused eager mode runs the queue faster than the signal comes).
    threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
    torch.axon.synchronize()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for _ in range(100):
            x = x * 1.0  # the interrupt is raised between Python bytecodes at the latest
        torch.axon.synchronize()
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
print(float(x[0]) == float(x[0]))
""",
    "exit with queued work and live tensors": QUEUE + "print('leaving')\n",
    # A thread still issuing ops when the main thread ends (the interpreter waits for it). A
    # daemon thread in an op at exit aborts the process on PyTorch's CPU as well (pybind11
    # re-takes the GIL during finalisation): PyTorch's behaviour, not tested here.
    "exit with a thread issuing ops": QUEUE
    + """
import threading
def work():
    y = torch.ones(1 << 16, device="axon")
    for _ in range(3000):
        y = y * 1.0
threading.Thread(target=work).start()
print('leaving')
""",
}


@pytest.mark.parametrize("case", CASES)
def test_ends_promptly_and_cleanly(case):
    run = subprocess.run([sys.executable, "-c", CASES[case]], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr and "terminate called" not in run.stderr, run.stderr[-2000:]
    if case.startswith("sigint"):
        assert run.stdout.split() == ["interrupted", "True"], run.stdout
