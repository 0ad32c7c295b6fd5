"""torch.distributed on axon across two hosts, made on this machine: scripts/two_hosts.sh puts two
network namespaces on a veth pair (10.77.0.1 and 10.77.0.2), and one torchrun per namespace
meets the other through c10d rendezvous on 10.77.0.1. Each node runs one rank of
torch_axon/distributed/examples/train.py (DDP, then FSDP2's fully_shard, on axon tensors); the
final parameters of both ranks must equal one process's training on the whole batch, on the CPU.

What crossing namespaces needs, each found by leaving it out (the run hangs or fails):
- GLOO_SOCKET_IFNAME=axon0: else Gloo binds to the address the hostname resolves to (127.0.0.1
  here), and each rank tells the other to connect to its own loopback;
- torchrun --local-addr: else rank 0's agent advertises its FQDN as MASTER_ADDR, which again
  resolves to 127.0.0.1 in the other namespace, and the workers never reach the store;
- --rdzv-conf is_host=1 / 0: else torchrun guesses which agent hosts the rendezvous store from
  the hostname, which both namespaces share, and the rendezvous never completes.

Skips (with the reason) where namespaces cannot be made: not root, no iproute2, EPERM in a
container without CAP_SYS_ADMIN / CAP_NET_ADMIN. The namespaces are removed whatever the outcome.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest
import torch
import torch.distributed as dist

from torch_axon.distributed.examples import train

REPO = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "two_hosts.sh"
TRAIN = REPO / "torch_axon" / "distributed" / "examples" / "train.py"
NAMESPACES = ("axon-host0", "axon-host1")
ADDRESSES = ("10.77.0.1", "10.77.0.2")
LINK = "axon0"
# The namespaces are new for each run, so nothing else can hold this port in them.
PORT = 29577
# Normally some 10 s (two interpreters and Axon starting in each namespace); the limit only stops
# a hung rendezvous from hanging the suite.
LAUNCH_TIMEOUT_S = 120


def _cannot_make_namespaces() -> str | None:
    if not dist.is_available() or not dist.is_gloo_available():
        return "torch.distributed with Gloo is not available"
    if os.geteuid() != 0:
        return "network namespaces need root (CAP_NET_ADMIN, CAP_SYS_ADMIN)"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2) to make network namespaces"
    return None


@pytest.fixture(scope="module")
def hosts():
    reason = _cannot_make_namespaces()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "AXON_NS_PREFIX": "axon-host", "AXON_NS_LINK": LINK, "AXON_NS_SUBNET": "10.77.0"}
    try:
        up = subprocess.run([str(SCRIPT), "up"], capture_output=True, text=True, env=env, timeout=60)
        if up.returncode != 0:
            # EPERM ("Operation not permitted") in an unprivileged container, for one.
            pytest.skip(f"cannot make network namespaces: {up.stderr.strip() or up.stdout.strip()}")
        yield NAMESPACES
    finally:
        subprocess.run([str(SCRIPT), "down"], capture_output=True, env=env, timeout=60)


def _launch(node: int, out: pathlib.Path) -> list[str]:
    return [
        "ip", "netns", "exec", NAMESPACES[node],
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes", "2", "--nproc-per-node", "1",
        "--rdzv-backend", "c10d", "--rdzv-endpoint", f"{ADDRESSES[0]}:{PORT}", "--rdzv-id", "axon-two-hosts",
        "--rdzv-conf", f"is_host={int(node == 0)}",
        "--local-addr", ADDRESSES[node],
        str(TRAIN), "--mode", *train.MODES, "--out", str(out),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def two_host_run(hosts, tmp_path_factory):
    """Both nodes' training, run once for the module's tests: the output folder and the logs."""
    out = tmp_path_factory.mktemp("two_hosts")
    env = {
        **os.environ,
        "GLOO_SOCKET_IFNAME": LINK,
        # The checkout under test, not whichever torch_axon is installed.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    procs = [
        subprocess.Popen(
            _launch(node, out),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # one process group per node: a timeout ends its workers too
        )
        for node in range(2)
    ]
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=LAUNCH_TIMEOUT_S)[0])
    except subprocess.TimeoutExpired:
        logs = ["(timed out)"] * 2
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    failed = [(node, p.returncode) for node, p in enumerate(procs) if p.returncode != 0]
    if failed:
        tails = "\n".join(
            f"--- node {n} ({NAMESPACES[n]}) ---\n{logs[n][-4000:] if n < len(logs) else ''}" for n in range(2)
        )
        pytest.fail(f"torchrun failed on nodes {failed}:\n{tails}")
    return out, logs


@pytest.fixture(scope="module")
def single_process():
    # The reference runs on the CPU: one run on axon would share any fault of axon's own kernels.
    params = train.train_single("cpu")
    initial = {k: v.detach() for k, v in train.make_model().named_parameters()}
    # Guards the comparison: the steps must have moved every parameter.
    for name, p in params.items():
        assert not torch.equal(p, initial[name]), f"{name} did not change in training"
    return params


def test_one_rank_per_host(two_host_run):
    _, logs = two_host_run
    for node, log in enumerate(logs):
        ranks = {line.split()[1] for line in log.splitlines() if line.startswith("rank ")}
        assert len(ranks) == 1, f"node {node} should run exactly one rank, ran {ranks}:\n{log[-2000:]}"
    assert {line.split()[1] for log in logs for line in log.splitlines() if line.startswith("rank ")} == {
        "0/2",
        "1/2",
    }


@pytest.mark.parametrize("mode", train.MODES)
def test_two_hosts_match_single_process(two_host_run, single_process, mode):
    out, _ = two_host_run
    for rank in range(2):
        params = torch.load(out / f"{mode}-rank{rank}.pt")
        assert params.keys() == single_process.keys()
        for name, expected in single_process.items():
            torch.testing.assert_close(
                params[name], expected, atol=1e-5, rtol=1e-5, msg=lambda m, n=name, r=rank: f"{mode} rank {r} {n}: {m}"
            )
