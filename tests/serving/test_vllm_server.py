"""`vllm serve` on axon, asked through the `openai` client on a loopback port: completions and
chat completions, streamed and not, a prompt longer than the context (vLLM's own 400 error, and
the server carries on), a clean shutdown on SIGINT, and a dtype it cannot serve refused at start.
The tiny Llama of serving_models.py; greedy decoding, so the streamed text must equal the whole
one. Runs where vLLM is installed (make test-serving)."""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch

pytest.importorskip("vllm", reason="vLLM is not installed here: make serving-setup, then make test-serving")
openai = pytest.importorskip("openai", reason="the openai client comes with vLLM's server requirements")

pytestmark = pytest.mark.skipif(not torch.axon.is_available(), reason="no axon device")

from serving_models import tiny_model_dir  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> str:
    return tiny_model_dir(tmp_path_factory)


START_S = 300  # a cold start builds Axon's kernels for the model


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(model_dir):
    port = _free_port()
    cmd = [sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", model_dir, "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--dtype", "float32", "--enforce-eager", "--max-model-len", "128"]
    cmd += ["--max-num-seqs", "4", "--kv-cache-memory-bytes", str(1 << 20), "--served-model-name", "tiny"]
    log = open(os.path.join(model_dir, "server.log"), "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
    deadline = time.monotonic() + START_S
    while True:
        if proc.poll() is not None:
            log.close()
            pytest.fail(f"vllm serve exited ({proc.returncode}):\n{open(log.name).read()[-4000:]}")
        try:
            client.models.list()
            break
        except openai.APIConnectionError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"vllm serve did not answer within {START_S} s:\n{open(log.name).read()[-4000:]}")
            time.sleep(1)
    yield proc, client
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("vllm serve did not stop within 60 s of SIGINT")
    log.close()


PROMPT = "w5 w9 w23 w42 w7"


def test_completions_streamed_and_whole(server):
    _, client = server
    whole = client.completions.create(model="tiny", prompt=PROMPT, max_tokens=8, temperature=0)
    assert whole.usage.completion_tokens == 8 and whole.choices[0].text.strip()
    stream = client.completions.create(model="tiny", prompt=PROMPT, max_tokens=8, temperature=0, stream=True)
    assert "".join(chunk.choices[0].text for chunk in stream) == whole.choices[0].text


def test_chat_completions_streamed_and_whole(server):
    _, client = server
    messages = [{"role": "user", "content": PROMPT}]
    whole = client.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=0)
    assert whole.choices[0].message.content and whole.usage.completion_tokens == 8
    stream = client.chat.completions.create(model="tiny", messages=messages, max_tokens=8, temperature=0, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == whole.choices[0].message.content


def test_prompt_past_the_context_is_refused_and_the_server_goes_on(server):
    proc, client = server
    with pytest.raises(openai.BadRequestError, match="context|length|tokens"):
        client.completions.create(model="tiny", prompt=" ".join(["w5"] * 200), max_tokens=4)
    assert proc.poll() is None
    assert (
        client.completions.create(model="tiny", prompt=PROMPT, max_tokens=2, temperature=0).usage.completion_tokens == 2
    )


def test_shutdown_on_sigint(server):
    proc, _ = server
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) is not None


def test_a_dtype_axon_does_not_serve_is_refused_before_start(model_dir):
    """`vllm serve --dtype float64`: vLLM's own argument check refuses it, names the choices,
    and the process ends at once (no server left behind, no traceback)."""
    cmd = [sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", model_dir, "--dtype", "float64"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=START_S)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "float64" in done.stderr and "bfloat16" in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
