"""Hugging Face transformers models, built from configs with random weights (nothing is
downloaded), run on axon: forward and backward match the CPU, and greedy generate() with a KV
cache produces the CPU's tokens (issue 4)."""

import pytest
import torch

transformers = pytest.importorskip("transformers", reason="transformers is not installed")

DEV = "axon"


def gpt2():
    config = transformers.GPT2Config(n_embd=64, n_layer=2, n_head=4, n_positions=64, vocab_size=211)
    return transformers.GPT2LMHeadModel(config)


def llama():
    config = transformers.LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        vocab_size=211,
    )
    return transformers.LlamaForCausalLM(config)


def bert():
    config = transformers.BertConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, vocab_size=211
    )
    return transformers.BertForMaskedLM(config)


def t5():
    config = transformers.T5Config(
        d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4, vocab_size=211, decoder_start_token_id=0
    )
    return transformers.T5ForConditionalGeneration(config)


MODELS = {"gpt2": gpt2, "llama": llama, "bert": bert, "t5": t5}


def build(name: str):
    torch.manual_seed(0)
    model = MODELS[name]()
    model.config.attn_implementation = "eager"
    model.eval()  # dropout off: CPU and axon draw different random numbers
    return model


def inputs(name: str, batch: int = 2, length: int = 12) -> dict:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, 211, (batch, length), generator=g)
    mask = torch.ones_like(ids)
    mask[1, :3] = 0  # left padding in the second row
    feed = {"input_ids": ids, "attention_mask": mask}
    if name == "t5":
        feed["decoder_input_ids"] = torch.randint(3, 211, (batch, 5), generator=g)
        feed["labels"] = torch.randint(3, 211, (batch, 5), generator=g)
    else:
        feed["labels"] = ids.clone()
    return feed


@pytest.mark.parametrize("name", sorted(MODELS))
def test_forward_backward_match_cpu(name):
    cpu_model = build(name)
    axon_model = build(name).to(DEV)
    feed = inputs(name)
    torch.axon.fallback_ops(reset=True)
    cpu_out = cpu_model(**feed)
    axon_out = axon_model(**{k: v.to(DEV) for k, v in feed.items()})
    torch.testing.assert_close(axon_out.logits.cpu(), cpu_out.logits, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(axon_out.loss.cpu(), cpu_out.loss, rtol=1e-4, atol=1e-4)
    cpu_out.loss.backward()
    axon_out.loss.backward()
    for (pname, p_cpu), p_axon in zip(cpu_model.named_parameters(), axon_model.parameters(), strict=True):
        if p_cpu.grad is None:
            assert p_axon.grad is None, pname
            continue
        torch.testing.assert_close(p_axon.grad.cpu(), p_cpu.grad, rtol=1e-3, atol=1e-4, msg=pname)
    assert torch.axon.fallback_ops() == {}


@pytest.mark.parametrize("name", ["gpt2", "llama", "t5"])
def test_greedy_generate_with_kv_cache_matches_cpu(name):
    cpu_model = build(name)
    axon_model = build(name).to(DEV)
    feed = inputs(name)
    prompt = {"input_ids": feed["input_ids"], "attention_mask": feed["attention_mask"]}
    settings = dict(max_new_tokens=8, do_sample=False, use_cache=True, pad_token_id=0)
    torch.axon.fallback_ops(reset=True)
    expected = cpu_model.generate(**prompt, **settings)
    got = axon_model.generate(**{k: v.to(DEV) for k, v in prompt.items()}, **settings)
    assert got.device.type == DEV
    assert torch.equal(got.cpu(), expected)
    assert torch.axon.fallback_ops() == {}
