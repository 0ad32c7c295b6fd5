"""``python -m torch_axon.tools.bench.serving``: serving throughput and latency on axon, in one run.

Runs in vLLM's environment (``make bench-serving``: build/vllm-venv, see docs/serving.md). A
Llama-architecture model with random weights (hidden 512, 4 layers, 8 query heads over 4 KV
heads, vocabulary 2048, float32; nothing downloaded) serves requests of a 32-token prompt and 64
generated tokens (EOS ignored, greedy):

- ``vllm serve`` on axon (its default multiprocess engine), asked by the ``openai`` client with
  1, 8 and 32 streamed requests at once: output tokens per second over the wall time of the
  batch, and at 8 the time to first token and the gaps between tokens (percentiles);
- transformers' ``generate()`` on axon, one request at a time and as one batch of 8 and of 32;
- the same on the CPU (PyTorch eager).

Every figure includes what a user waits for: prompt processing, sampling, and for vLLM the
HTTP round trips and detokenisation. Each batch size is run once to warm up before it is
measured (Axon builds its kernels for new shapes once; later processes load them from its
cache). Writes ``OUT/benchmarks-serving.md`` and refreshes the same table in
``OUT/benchmarks.md`` between its markers; raw results in ``DATA/serving.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import torch

BEGIN, END = "<!-- serving:begin -->", "<!-- serving:end -->"
PROMPT_TOKENS, OUTPUT_TOKENS = 32, 64
CONCURRENCY = (1, 8, 32)
TARGET = 3.0  # vLLM at 8 requests / transformers one at a time, both on axon (issue 25)


def save_model(folder: str) -> None:
    """The benchmark's model and a word-level tokenizer (w0 .. w2047), random weights."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=2048,
        hidden_size=512,
        intermediate_size=1376,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=4,
        max_position_embeddings=1024,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer = Tokenizer(WordLevel({f"w{i}": i for i in range(2048)}, unk_token="w0"))
    tokenizer.pre_tokenizer = WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="w0", pad_token="w0", eos_token="w2").save_pretrained(
        folder
    )


def prompt(i: int) -> list[int]:
    g = torch.Generator().manual_seed(100 + i)
    return torch.randint(3, 2048, (PROMPT_TOKENS,), generator=g).tolist()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


# ---- vLLM ---------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(folder: str, log_path: str) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    cmd = [sys.executable, "-m", "vllm.entrypoints.cli.main", "serve", folder, "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--dtype", "float32", "--enforce-eager", "--max-model-len", "256"]
    cmd += ["--max-num-seqs", "32", "--kv-cache-memory-bytes", str(256 << 20), "--served-model-name", "bench"]
    log = open(log_path, "w")  # noqa: SIM115 - the server's lifetime
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    import openai

    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
    deadline = time.monotonic() + 600
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"vllm serve exited ({proc.returncode}); its log: {log_path}")
        try:
            client.models.list()
            return proc, port
        except openai.APIConnectionError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"vllm serve did not answer within 600 s; its log: {log_path}") from None
            time.sleep(1)


async def _one_request(client, tokens: list[int]) -> dict:
    """A streamed completion: when each token arrived, from the moment the request left."""
    start = time.perf_counter()
    arrivals = []
    stream = await client.completions.create(
        model="bench",
        prompt=tokens,
        max_tokens=OUTPUT_TOKENS,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True},
    )
    generated = 0
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].text is not None:
            arrivals.append(time.perf_counter() - start)
        if chunk.usage is not None:
            generated = chunk.usage.completion_tokens
    return {"arrivals": arrivals, "tokens": generated}


async def _batch(port: int, n: int, offset: int) -> dict:
    import openai

    client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", max_retries=0)
    start = time.perf_counter()
    requests = await asyncio.gather(*(_one_request(client, prompt(offset + i)) for i in range(n)))
    wall = time.perf_counter() - start
    await client.close()
    tokens = sum(r["tokens"] for r in requests)
    gaps = [b - a for r in requests for a, b in zip(r["arrivals"], r["arrivals"][1:], strict=False)]
    first = [r["arrivals"][0] for r in requests if r["arrivals"]]
    return {"requests": n, "tokens": tokens, "seconds": wall, "rate": tokens / wall, "ttft": first, "gaps": gaps}


def measure_vllm(folder: str, log_path: str) -> dict:
    proc, port = start_server(folder, log_path)
    try:
        rows = {}
        for n in CONCURRENCY:
            asyncio.run(_batch(port, n, 1000 + n))  # warm-up at this batch's shapes: kernel builds
            rows[str(n)] = asyncio.run(_batch(port, n, 10 * n))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    return rows


# ---- transformers ----------------------------------------------------------------------------------


def measure_transformers(folder: str, device: str, batches: tuple[int, ...], one_at_a_time: int) -> dict:
    """Output tokens per second of greedy generate(): ``one_at_a_time`` requests in turn, then each
    batch size as one call (prompts of equal length: no padding)."""
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(folder, dtype=torch.float32).to(device).eval()

    def generate(ids: list[list[int]]) -> float:
        x = torch.tensor(ids, device=device)
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(
                x, max_new_tokens=OUTPUT_TOKENS, min_new_tokens=OUTPUT_TOKENS, do_sample=False, pad_token_id=0
            )
        out.cpu()  # the tokens reach the host, as a server's would
        return time.perf_counter() - start

    generate([prompt(999)])  # warm-up at each shape: kernel builds, first allocations
    seconds = sum(generate([prompt(i)]) for i in range(one_at_a_time))
    rows = {"one_at_a_time": {"requests": one_at_a_time, "seconds": seconds}}
    for n in batches:
        generate([prompt(1000 + i) for i in range(n)])
        rows[f"batch_{n}"] = {"requests": n, "seconds": generate([prompt(i) for i in range(n)])}
    for row in rows.values():
        row["tokens"] = row["requests"] * OUTPUT_TOKENS
        row["rate"] = row["tokens"] / row["seconds"]
    return rows


# ---- report --------------------------------------------------------------------------------------


def markdown(r: dict) -> str:
    v, ta, tc = r["vllm_axon"], r["transformers_axon"], r["transformers_cpu"]
    base = ta["one_at_a_time"]["rate"]
    lines = [
        f"## Serving (vLLM)\n\nRun of {r['date']} on {r['device']} (`{r['command']}`). A Llama with random weights"
        f" (hidden 512, 4 layers, 8 query heads over 4 KV heads, float32), prompts of {PROMPT_TOKENS} tokens,"
        f" {OUTPUT_TOKENS} generated tokens each, greedy; output tokens per second over the wall time, prompt"
        " processing included. **Ratio = against transformers on axon, one request at a time.**",
        "",
        "| what | requests | output tokens/s | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for n in CONCURRENCY:
        row = v[str(n)]
        lines.append(
            f"| vLLM on axon, concurrent streamed requests | {n} | {row['rate']:.1f} | {row['rate'] / base:.2f}x |"
        )
    for label, rows in (("transformers generate() on axon", ta), ("transformers generate() on the CPU", tc)):
        for key, row in rows.items():
            how = "one at a time" if key == "one_at_a_time" else "one batch"
            lines.append(f"| {label}, {how} | {row['requests']} | {row['rate']:.1f} | {row['rate'] / base:.2f}x |")
    at8 = v["8"]
    lines += [
        "",
        "Latency at 8 concurrent requests (vLLM on axon): time to first token "
        + ", ".join(f"p{q} {1000 * percentile(at8['ttft'], q):.0f} ms" for q in (50, 90, 99))
        + "; between tokens "
        + ", ".join(f"p{q} {1000 * percentile(at8['gaps'], q):.0f} ms" for q in (50, 90, 99))
        + ".",
        "",
        f"Target (issue 25): vLLM on axon at 8 concurrent requests >= {TARGET:.0f}x transformers on axon one at a"
        f" time: {at8['rate']:.1f} / {base:.1f} = {at8['rate'] / base:.2f}x,"
        f" {'met' if at8['rate'] / base >= TARGET else '**not met**'}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from .. import add_output_args, output_dirs
    from .kernels import refresh_section

    p = argparse.ArgumentParser(prog="python -m torch_axon.tools.bench.serving", description=__doc__.split("\n\n")[0])
    add_output_args(p, "folder of the report (benchmarks-serving.md, and the section in benchmarks.md)",
                    "folder of the raw results: serving.json")  # fmt: skip
    args = p.parse_args(argv)
    out_dir, data_dir = output_dirs(args)
    folder = tempfile.mkdtemp(prefix="axon-serving-bench-")
    save_model(folder)
    results = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "command": "python -m torch_axon.tools.bench.serving " + " ".join(argv if argv is not None else sys.argv[1:]),
        "device": torch.axon.get_device_properties(0).name,
        "vllm_axon": measure_vllm(folder, os.path.join(folder, "server.log")),
        "transformers_axon": measure_transformers(folder, "axon", (8, 32), one_at_a_time=4),
        "transformers_cpu": measure_transformers(folder, "cpu", (8, 32), one_at_a_time=4),
    }
    os.makedirs(data_dir, exist_ok=True)
    with open(data_dir / "serving.json", "w") as f:
        json.dump(results, f, indent=1)
    section = markdown(results)
    print(section)
    (out_dir / "benchmarks-serving.md").write_text("# Benchmarks: serving\n\n" + section)
    refresh_section(str(out_dir / "benchmarks.md"), section, BEGIN, END)
    print(f"wrote {out_dir / 'benchmarks-serving.md'} and its section in {out_dir / 'benchmarks.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
