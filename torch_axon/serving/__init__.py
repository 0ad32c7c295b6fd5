"""Serving on axon: a vLLM platform plugin (``vllm.platform_plugins`` entry point ``axon``).

vLLM finds out-of-tree hardware through that entry point: it calls ``register()`` in every
process it starts (the front end, the engine core, each worker), and the one plugin that names
a class becomes ``vllm.platforms.current_platform``. The plugin's boundary:

- ``platform``: ``AxonPlatform``, what vLLM asks of a device (name, memory, seeding, the
  distributed backend) and the configuration it forces (no CUDA graphs, no compilation, no
  async scheduling, spawned workers), plus torch versions of the Triton kernels vLLM's
  model runner launches itself.
- ``worker``: ``AxonWorker`` / ``AxonModelRunner``, vLLM's GPU worker with its CUDA-only
  steps (memory pools, kernel warm-up) taken out.
- ``attention``: the paged-KV-cache attention backend.

Everything else (scheduler, sampler, model code) is vLLM's own, running on axon tensors. Nothing
here is imported unless vLLM asks for it: ``import torch_axon`` never imports vLLM.
"""

PLATFORM = "torch_axon.serving.platform.AxonPlatform"


def register() -> str | None:
    """The entry point: the platform's qualified name where vLLM and an axon device are both
    present, else None (vLLM then picks another platform). vLLM may call it more than once, and
    treats an exception as "not this platform" only after logging it, so it never raises."""
    try:
        import importlib.util

        if importlib.util.find_spec("vllm") is None:
            return None
        import torch

        import torch_axon  # noqa: F401  (registers torch.axon where autoload is off)

        if not torch.axon.is_available():
            return None
    except Exception:
        return None
    return PLATFORM
