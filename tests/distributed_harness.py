"""Runs a function in several processes, one rank each, as torchrun would: env:// rendezvous on
127.0.0.1 (MASTER_ADDR/PORT, RANK, WORLD_SIZE, LOCAL_RANK). Each rank checks its own results
against a single-process computation and raises on a mismatch; the first failure fails the test
with that rank's traceback."""

from __future__ import annotations

import os
import signal
import socket
import time
import warnings

import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, fn, world_size: int, port: int, args: tuple) -> None:
    import faulthandler

    faulthandler.enable(all_threads=True)  # a rank that crashes shows where it was
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world_size),
    )
    import torch.distributed as dist

    try:
        fn(rank, world_size, *args)
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
        # PyTorch's autograd device thread drops its last graph task under the GIL; a rank whose
        # last act was a backward pass may exit before it could, and a thread that wants the GIL
        # while the interpreter finalizes aborts the process ("terminate called without an active
        # exception"). A moment without the GIL lets it finish.
        time.sleep(0.1)


# Gloo's TCP rendezvous can drop a connection while it builds a group's full mesh when four ranks
# share two loaded cores ("connectFullMesh failed ... Connection closed by peer", every rank still
# alive): a transport hiccup before any collective has run, not a result. Such a run is repeated
# once, with a warning; any other failure, or the same one twice, fails the test.
_RENDEZVOUS_FLAKE = "Gloo connectFullMesh failed"


def run_ranks(fn, world_size: int = 2, *args, env: dict | None = None, timeout_s: float = 300) -> None:
    """Runs ``fn(rank, world_size, *args)`` in ``world_size`` fresh processes, with ``env`` added
    to their environment from the start (PoCL reads ``POCL_DEVICES`` when it loads)."""
    try:
        _run_ranks_once(fn, world_size, args, env, timeout_s)
    except mp.ProcessRaisedException as error:
        if _RENDEZVOUS_FLAKE not in str(error):
            raise
        warnings.warn(f"{fn.__name__}: Gloo rendezvous dropped a connection; running the ranks again", stacklevel=2)
        _run_ranks_once(fn, world_size, args, env, timeout_s)


def _run_ranks_once(fn, world_size: int, args: tuple, env: dict | None, timeout_s: float) -> None:
    saved = dict(os.environ)
    os.environ.update(env or {})
    try:
        context = mp.start_processes(
            _rank_main, args=(fn, world_size, free_port(), args), nprocs=world_size, join=False, start_method="spawn"
        )
        # A hang fails the test instead of stalling the whole run.
        deadline = time.monotonic() + timeout_s
        try:
            while not context.join(timeout=5):
                if time.monotonic() > deadline:
                    for process in context.processes:
                        process.kill()
                    raise TimeoutError(f"{fn.__name__}: ranks still running after {timeout_s} s")
        except (mp.ProcessRaisedException, mp.ProcessExitedException) as error:
            error.args = (str(error) + _every_rank(context),)
            raise
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _every_rank(context) -> str:
    """What each rank ended with. PyTorch reports the first failed rank it sees, which is often
    one that only saw another rank go away ("Connection closed by peer"); the rank that went
    first, and why, is in this list."""
    import pickle

    lines = ["\n-- every rank:"]
    for rank, (process, error_file) in enumerate(zip(context.processes, context.error_files, strict=True)):
        code = process.exitcode
        outcome = f"ended by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
        if os.access(error_file, os.R_OK):
            with open(error_file, "rb") as fh:
                trace = pickle.load(fh).strip().splitlines()
            outcome += f"; raised: {trace[-1] if trace else '?'}"
        lines.append(f"rank {rank}: {outcome}")
    return "\n".join(lines)
