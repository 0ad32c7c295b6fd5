"""vLLM's offline engine (``LLM.generate``) on axon through the torch_axon.serving platform plugin.

Tiny models with random weights and a tokenizer made in code (nothing downloaded), a Llama, a
Qwen2 and a Qwen3 (serving_models.FAMILIES), are served on axon one after another and checked
token for token against transformers' greedy generate on the CPU: a batch of prompts of
different lengths (the prefill path, then the batched decode path), and a repeated long prompt
whose first blocks come from vLLM's prefix cache (queries shorter than the sequence). Then
seeded sampling must repeat itself, greedy decoding must not fall back to the CPU, and a dtype
axon does not serve must be refused with a message naming the ones it does. The engine runs
in-process (VLLM_ENABLE_V1_MULTIPROCESSING=0) so the test can read axon's fallback counters;
the plugin itself is what a multiprocess engine loads too.

vLLM pins its own transformers, so it lives in a virtual environment of its own
(``make serving-setup``; ``make test-serving`` runs this folder there). Elsewhere it skips.
"""

import os

import pytest
import torch

vllm = pytest.importorskip("vllm", reason="vLLM is not installed here: make serving-setup, then make test-serving")

import torch_axon.serving  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.axon.is_available(), reason="no axon device")

from serving_models import FAMILIES, reference_tokens, tiny_model_dir  # noqa: E402


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def model_dir(request, tmp_path_factory) -> str:
    return tiny_model_dir(tmp_path_factory, request.param)


MAX_TOKENS = 8
# Lengths 3 to 40: one prompt spans three 16-token KV-cache blocks.
PROMPTS = [[1, 5, 9, 23, 42, 7], [3, 4, 200], list(range(10, 50)), [17] * 11]


def _use_axon_platform() -> None:
    """vLLM finds the plugin through the ``vllm.platform_plugins`` entry point (setup.py). An
    editable install made before that entry point existed lacks it until it is reinstalled
    (make build); then the platform is installed directly, which is what the entry point does
    in-process."""
    from importlib.metadata import entry_points

    assert torch_axon.serving.register() == torch_axon.serving.PLATFORM
    if not any(ep.name == "axon" for ep in entry_points(group="vllm.platform_plugins")):
        from torch_axon.serving.platform import AxonPlatform

        vllm.platforms.current_platform = AxonPlatform()


ENGINE_ARGS = dict(
    enforce_eager=True,
    max_model_len=128,
    max_num_seqs=4,
    max_num_batched_tokens=128,
    # A fixed, small KV cache (2048 tokens of these models) rather than a share of the device.
    kv_cache_memory_bytes=1 << 20,
    seed=0,
)


@pytest.fixture(scope="module")
def llm(model_dir):
    from vllm.distributed.parallel_state import cleanup_dist_env_and_memory

    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    _use_axon_platform()
    engine = vllm.LLM(model=model_dir, dtype="float32", **ENGINE_ARGS)
    assert vllm.platforms.current_platform.device_type == "axon"
    yield engine
    # The next family's engine starts in this process: this one's model-parallel groups go.
    engine.llm_engine.engine_core.shutdown()
    del engine
    cleanup_dist_env_and_memory()


def _generate(llm, prompts, **sampling) -> list[list[int]]:
    params = vllm.SamplingParams(max_tokens=MAX_TOKENS, ignore_eos=True, **sampling)
    outputs = llm.generate([{"prompt_token_ids": p} for p in prompts], params, use_tqdm=False)
    return [list(o.outputs[0].token_ids) for o in outputs]


def test_greedy_matches_transformers(llm, model_dir):
    expected = reference_tokens(model_dir, PROMPTS, MAX_TOKENS)
    assert _generate(llm, PROMPTS, temperature=0.0) == expected
    # The 40-token prompt again: its first two blocks now come from the prefix cache, so its
    # prefill is 8 queries over a 40-token sequence.
    assert _generate(llm, [PROMPTS[2]], temperature=0.0) == [expected[2]]


def test_greedy_decode_runs_natively(llm):
    torch.axon.fallback_ops(reset=True)
    _generate(llm, PROMPTS[:2], temperature=0.0)
    used = torch.axon.fallback_ops(reset=True)
    assert not used, f"ops fell back to the CPU while serving: {used}"


def test_seeded_sampling_repeats(llm):
    sampling = dict(temperature=0.8, top_p=0.9, top_k=20, seed=1234)
    first = _generate(llm, PROMPTS, **sampling)
    assert _generate(llm, PROMPTS, **sampling) == first
    assert all(len(tokens) == MAX_TOKENS for tokens in first)


def test_a_dtype_axon_does_not_serve_is_refused(llm, model_dir):
    """float64 is no vLLM dtype name (its own argument check refuses it); given as a torch dtype
    it reaches the platform, which names the dtypes it serves before anything is loaded."""
    with pytest.raises(Exception, match="Input should be 'auto', 'half'"):
        vllm.LLM(model=model_dir, dtype="float64", **ENGINE_ARGS)
    with pytest.raises(ValueError, match=r"axon serves float32, float16 and bfloat16, not torch.float64"):
        vllm.LLM(model=model_dir, dtype=torch.float64, **ENGINE_ARGS)
