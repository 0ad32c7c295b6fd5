"""``AxonPlatform``: what vLLM asks of the axon device, and the configuration it must run under."""

import os
from contextlib import AbstractContextManager

import torch
from vllm.platforms.interface import Platform, PlatformEnum


class AxonPlatform(Platform):
    _enum = PlatformEnum.OOT
    device_name = "axon"
    device_type = "axon"
    # vLLM registers its custom ops for this dispatch key; axon is torch's PrivateUse1 backend.
    dispatch_key = "PrivateUse1"
    # Tensor-parallel collectives: the axon c10d backend (torch_axon.distributed), which takes
    # axon tensors (and the CPU tensors vLLM's own groups exchange).
    dist_backend = "axon"
    # vLLM compiles a few helpers with torch.compile(backend=simple_compile_backend): eager
    # keeps them out of Inductor, which compilation being off does not cover.
    simple_compile_backend = "eager"

    # The dtypes the paged kernels (paged_kernels.py) are built for.
    SERVED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)

    @property
    def supported_dtypes(self) -> list[torch.dtype]:
        return list(self.SERVED_DTYPES)

    @classmethod
    def check_if_supports_dtype(cls, dtype: torch.dtype) -> None:
        """vLLM's own dtype names are the served ones; a torch dtype given directly is not checked
        by vLLM, and another one would reach the kernels."""
        if dtype not in cls.SERVED_DTYPES:
            raise ValueError(f"axon serves float32, float16 and bfloat16, not {dtype}: choose one with --dtype")

    @classmethod
    def import_kernels(cls) -> None:
        """vLLM's compiled ops (vllm._C) are CUDA or CPU builds; axon uses none of them."""

    @classmethod
    def import_ir_kernels(cls) -> None:
        """Nor its IR kernel libraries."""

    @classmethod
    def get_device_name(cls, device_id: int = 0) -> str:
        return torch.axon.get_device_name(device_id)

    @classmethod
    def get_device_total_memory(cls, device_id: int = 0) -> int:
        return torch.axon.mem_get_info(device_id)[1]

    @classmethod
    def set_device(cls, device: torch.device) -> None:
        torch.axon.set_device(device)

    @classmethod
    def manual_seed_all(cls, seed: int) -> None:
        torch.axon.manual_seed_all(seed)

    @classmethod
    def inference_mode(cls) -> AbstractContextManager:
        # no_grad, as vLLM's CPU and XPU platforms use: it is enough for serving, and the
        # probe that preceded this plugin ran under it (inference_mode is untried on axon here).
        return torch.no_grad()

    @classmethod
    def is_pin_memory_available(cls) -> bool:
        return True

    @classmethod
    def get_current_memory_usage(cls, device: torch.types.Device = None) -> float:
        return float(torch.axon.memory_allocated(device))

    @classmethod
    def check_runner_kv_caches_multi_layer(cls) -> None:
        """The attention backend reads each layer's own cache view; nothing to check."""

    @classmethod
    def get_attn_backend_cls(cls, selected_backend, attn_selector_config, num_heads=None) -> str:
        return "torch_axon.serving.attention.AxonAttentionBackend"

    @classmethod
    def check_and_update_config(cls, vllm_config) -> None:
        from vllm.config import CompilationMode, CUDAGraphMode

        if vllm_config.model_config is not None:
            # Before anything is loaded, as the GPU worker checks before it starts.
            cls.check_if_supports_dtype(vllm_config.model_config.dtype)
        compilation = vllm_config.compilation_config
        # vLLM's compilation is torch.compile with its own Inductor passes and custom ops built
        # for CUDA; the model runs eagerly, op by op, on axon's kernels.
        compilation.mode = CompilationMode.NONE
        # Graph capture is CUDA graphs; axon has no equivalent to replay.
        compilation.cudagraph_mode = CUDAGraphMode.NONE
        compilation.cudagraph_capture_sizes = []
        # Async scheduling overlaps steps on a second torch.cuda.Stream, which it creates directly.
        vllm_config.scheduler_config.async_scheduling = False
        # The engine core and workers are separate processes; axon, like CUDA, refuses to be used
        # in a process forked after it initialised, so they must be spawned.
        os.environ["VLLM_WORKER_MULTIPROC_METHOD"] = "spawn"
        parallel = vllm_config.parallel_config
        if parallel.worker_cls == "auto":
            parallel.worker_cls = "torch_axon.serving.worker.AxonWorker"
        # The attention backend takes any block size (MultipleOf(1)); 16 is vLLM's usual one.
        if not vllm_config.cache_config.user_specified_block_size:
            vllm_config.cache_config.block_size = 16

    @classmethod
    def register_triton_kernel_overrides(cls) -> None:
        """The Triton kernels the model runner launches itself, in torch ops on the device."""
        from vllm.triton_utils.dispatcher import register_kernels

        register_kernels({"vllm.v1.worker.block_table.ComputeSlotMappingKernel.kernel": compute_slot_mapping})


def compute_slot_mapping(
    num_tokens: int,
    max_num_tokens: int,
    query_start_loc: torch.Tensor,  # [num_reqs + 1] int32: where each request's tokens start
    positions: torch.Tensor,  # [>= num_tokens] int64: each token's position in its sequence
    block_table: torch.Tensor,  # [max_num_reqs, max_blocks_per_req] int32
    block_table_stride: int,
    slot_mapping: torch.Tensor,  # [max_num_tokens] int64, written: each token's KV-cache slot
    KV_CACHE_BLOCK_SIZE: int,
    TOTAL_CP_WORLD_SIZE: int,
    TOTAL_CP_RANK: int,
    CP_KV_CACHE_INTERLEAVE_SIZE: int,
    PAD_ID: int,
    BLOCK_SIZE: int,
) -> None:
    """vLLM's ComputeSlotMappingKernel: slot = block_table[request, pos // block] * block + pos % block,
    and PAD_ID past the batch's tokens. Called by keyword-compatible position, as the Triton
    kernel is. Every op stays on the device: the token-to-request map is a comparison against
    the request boundaries rather than a repeat_interleave, which would need them on the host."""
    if TOTAL_CP_WORLD_SIZE != 1:
        raise NotImplementedError("axon serving: context parallelism (slot mapping across CP ranks)")
    if num_tokens > 0:
        pos = positions[:num_tokens]
        token = torch.arange(num_tokens, device=pos.device)
        # A token belongs to the request whose range ends after it: count the ends at or before it.
        request = (token[:, None] >= query_start_loc[None, 1:].to(torch.int64)).sum(dim=1)
        block = block_table[request, pos // KV_CACHE_BLOCK_SIZE].to(torch.int64)
        slot_mapping[:num_tokens] = block * KV_CACHE_BLOCK_SIZE + pos % KV_CACHE_BLOCK_SIZE
    slot_mapping[num_tokens:max_num_tokens] = PAD_ID
