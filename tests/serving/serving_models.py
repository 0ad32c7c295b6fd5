"""Shared by the serving tests: a tiny Llama or Qwen saved to a folder, built in code (nothing
downloaded), and transformers' greedy tokens for it on the CPU. A module of its own rather than a conftest.py:
the other test folders import their conftest by that name, which a second one would shadow.
Test modules import these functions."""

import torch

VOCAB = 256


# The architectures the tests serve, all with grouped-query attention (4 query heads over 2 KV
# heads): Llama; Qwen2, whose query, key and value projections have biases and whose output layer
# shares the embedding's weights; Qwen3, which normalises each head's queries and keys.
FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", dict(tie_word_embeddings=False)),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", dict(tie_word_embeddings=True)),
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(tie_word_embeddings=False, head_dim=16)),
}


def save_tiny_model(folder: str, family: str = "llama") -> None:
    """A 2-layer model of the family, random weights (a wider init than the default, so that
    greedy picks are not near-ties; biases random too, where the default makes them zero), and a
    word-level tokenizer over names w0..w255. eos_token_id is None so that transformers never
    stops early; vLLM is told to ignore EOS."""
    import transformers
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit

    config_name, model_name, extra = FAMILIES[family]
    torch.manual_seed(0)
    config = getattr(transformers, config_name)(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        initializer_range=0.1,
        bos_token_id=1,
        eos_token_id=None,
        pad_token_id=0,
        **extra,
    )
    model = getattr(transformers, model_name)(config).to(torch.float32)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.Linear) and module.bias is not None:
                module.bias.normal_(0.0, 0.1)
    model.save_pretrained(folder)
    vocab = {f"w{i}": i for i in range(VOCAB)}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="w0"))
    tokenizer.pre_tokenizer = WhitespaceSplit()
    transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="w0",
        pad_token="w0",
        bos_token="w1",
        eos_token="w2",
        # For /v1/chat/completions: the messages' words one after another.
        chat_template="{% for message in messages %}{{ message['content'] }} {% endfor %}",
    ).save_pretrained(folder)


def reference_tokens(model_dir: str, prompts: list[list[int]], max_tokens: int) -> list[list[int]]:
    """transformers' greedy generate on the CPU, one prompt at a time (no padding to agree on)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    result = []
    with torch.no_grad():
        for prompt in prompts:
            ids = torch.tensor([prompt])
            out = model.generate(ids, max_new_tokens=max_tokens, min_new_tokens=0, do_sample=False, pad_token_id=0)
            result.append(out[0, len(prompt) :].tolist())
    return result


def tiny_model_dir(tmp_path_factory, family: str = "llama") -> str:
    """The model saved in a fresh temporary folder (the test modules' model_dir fixtures)."""
    folder = str(tmp_path_factory.mktemp(f"tiny-{family}"))
    save_tiny_model(folder, family)
    return folder
