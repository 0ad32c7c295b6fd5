"""Tensor parallelism of 2 over two axon devices (PoCL's CPU device twice: POCL_DEVICES): vLLM's
workers, one per device, exchange activations through the axon c10d backend (the platform's
dist_backend), and greedy generation gives the same tokens as transformers on the CPU, as one
device does (tests/serving/test_vllm_offline.py). The engine runs in a process of its own: the
device list is read once per process."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

pytest.importorskip("vllm", reason="vLLM is not installed here: make serving-setup, then make test-serving")

pytestmark = pytest.mark.skipif(not torch.axon.is_available(), reason="no axon device")

from serving_models import reference_tokens, tiny_model_dir  # noqa: E402


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> str:
    return tiny_model_dir(tmp_path_factory)


PROMPTS = [[1, 5, 9, 23, 42, 7], [3, 4, 200], list(range(10, 50))]
MAX_TOKENS = 8

ENGINE = textwrap.dedent(
    """
    import json, sys
    import torch, vllm
    prompts, max_tokens = json.loads(sys.argv[2]), int(sys.argv[3])
    assert torch.axon.device_count() >= 2, torch.axon.device_count()
    llm = vllm.LLM(model=sys.argv[1], dtype="float32", enforce_eager=True, max_model_len=128, max_num_seqs=4,
                   kv_cache_memory_bytes=1 << 20, tensor_parallel_size=2, seed=0)
    params = vllm.SamplingParams(max_tokens=max_tokens, ignore_eos=True, temperature=0.0)
    outs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    print("TOKENS", json.dumps([list(o.outputs[0].token_ids) for o in outs]))
    """
)


def test_two_devices_match_transformers(model_dir):
    platform = torch.axon.get_device_properties(0).platform_name
    if "Portable Computing Language" not in platform:
        pytest.skip(f"two devices come from PoCL's POCL_DEVICES here; the device is {platform}")
    env = {**os.environ, "POCL_DEVICES": "pthread pthread", "AXON_DEVICES": "all"}
    args = [sys.executable, "-c", ENGINE, model_dir, json.dumps(PROMPTS), str(MAX_TOKENS)]
    run = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-4000:]
    line = next(x for x in run.stdout.splitlines() if x.startswith("TOKENS "))
    assert json.loads(line.removeprefix("TOKENS ")) == reference_tokens(model_dir, PROMPTS, MAX_TOKENS)
