"""The model sweep (torch_axon.models) on a handful of architectures: the CI subset of
``make models``. Each must build tiny, run on axon, match the CPU, train and generate."""

from __future__ import annotations

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="the sweep needs transformers")

from torch_axon.models import hf, report  # noqa: E402
from torch_axon.models.tiny_configs import shrink, tiny_config  # noqa: E402

# A dense decoder, a mixture of experts (integer histc routing), a state-space model, a
# masked LM and an encoder-decoder.
SUBSET = [
    ("causal-lm", "llama"),
    ("causal-lm", "mixtral"),
    ("causal-lm", "mamba"),
    ("masked-lm", "bert"),
    ("seq2seq", "t5"),
]


@pytest.mark.parametrize("family,arch", SUBSET, ids=[a for _, a in SUBSET])
def test_architecture_matches_the_cpu(family, arch):
    r = hf.run(family, arch, timeout=600)
    assert r["status"] == "ok", r
    assert r["runs"] and r["matches"] and r["trains_match"], r
    assert r["forward_error"] <= hf.FORWARD_TOL and r["grad_error"] <= hf.GRAD_TOL
    assert not r["fallbacks"], r["fallbacks"]
    if family != "masked-lm":
        assert r["generates"] and r["same_tokens"], r


def test_tiny_configs_stay_valid():
    config = tiny_config("deepseek_v3")
    assert config.hidden_size == 64 and config.num_hidden_layers == 2
    # head_dim was qk_rope_head_dim in the default config: still equal, and the query head is
    # the sum of its parts
    assert config.head_dim == config.qk_rope_head_dim
    assert config.qk_head_dim == config.qk_nope_head_dim + config.qk_rope_head_dim
    assert config.num_key_value_heads == config.num_attention_heads  # equal in the default too
    llama = shrink(transformers.LlamaConfig(num_attention_heads=32, num_key_value_heads=8, pad_token_id=32000))
    assert llama.num_attention_heads % llama.num_key_value_heads == 0
    assert llama.pad_token_id < llama.vocab_size


def test_relative_error_and_report():
    a = torch.tensor([1.0, -2.0, float("nan")])
    assert hf.relative_error(a, a.to("axon")) == 0.0
    assert hf.relative_error(a, torch.tensor([1.0, -1.0, float("nan")])) == pytest.approx(0.5)
    assert hf.relative_error(a, torch.tensor([1.0, -2.0, 0.0])) == float("inf")
    records = [
        {
            "family": "causal-lm",
            "arch": "x",
            "status": "ok",
            "runs": True,
            "matches": True,
            "trains_match": True,
            "generates": True,
            "same_tokens": True,
            "fallbacks": {},
            "forward_error": 0.0,
            "grad_error": 0.0,
        },
        {
            "family": "causal-lm",
            "arch": "y",
            "status": "fails",
            "error": "NotImplementedError: axon: dtype ComplexFloat",
        },
        {"family": "causal-lm", "arch": "z", "status": "cpu_fails", "error": "ValueError: no"},
    ]
    s = report.summarize(records)["causal-lm"]
    assert (s["total"], s["reference"], s["runs"], s["matches"], s["zero_fallbacks"]) == (3, 2, 1, 1, 1)
    text = report.markdown(records, {})
    assert "1/2 (50.0%)" in text and "ComplexFloat" in text and "`z` (cpu_fails)" in text
