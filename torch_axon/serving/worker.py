"""``AxonWorker``: vLLM's GPU worker on an axon device, without its CUDA-only steps."""

import gc
from contextlib import AbstractContextManager, nullcontext

import torch
from vllm.platforms import current_platform
from vllm.utils.mem_utils import MemorySnapshot
from vllm.utils.torch_utils import set_random_seed
from vllm.v1.worker.gpu_model_runner import GPUModelRunner
from vllm.v1.worker.gpu_worker import Worker, init_worker_distributed_environment
from vllm.v1.worker.utils import request_memory


class AxonModelRunner(GPUModelRunner):
    def _zero_block_ids(self, block_ids) -> None:
        """The GPU runner zeroes newly allocated blocks (a Triton kernel) so that stale NaNs in
        slots past a sequence's end cannot leak into attention. The axon backend never lets those
        slots reach its output: it slices them off, or zeroes them in its gathered copy
        (attention.py), so the step is skipped."""


class AxonWorker(Worker):
    def init_device(self) -> None:
        """The GPU worker's init_device less its CUDA checks (NVML, compute capability), which
        would fail on axon: bind the device, join the process group, take the memory snapshot
        the KV-cache sizing starts from, and build the model runner."""
        self.device = torch.device(f"axon:{self.local_rank}")
        torch.axon.set_device(self.device)
        init_worker_distributed_environment(
            self.vllm_config,
            self.rank,
            self.distributed_init_method,
            self.local_rank,
            current_platform.dist_backend,
        )
        set_random_seed(self.model_config.seed)
        gc.collect()
        torch.accelerator.empty_cache()
        self.init_snapshot = MemorySnapshot(device=self.device)
        self.requested_memory = request_memory(self.init_snapshot, self.cache_config)
        self._init_workspace_and_model_runner()

    def _make_model_runner(self) -> AxonModelRunner:
        return AxonModelRunner(self.vllm_config, self.device)

    def _maybe_get_memory_pool_context(self, tag: str) -> AbstractContextManager:
        # The GPU worker's pool is CuMemAllocator (sleep mode); axon's caching allocator has none.
        return nullcontext()

    def compile_or_warm_up_model(self):
        """Nothing to compile or capture (both are off), and vLLM's kernel warm-up imports
        torchvision, which the serving environment need not have: only the seeding remains."""
        from vllm.v1.worker.worker_base import CompilationTimes

        set_random_seed(self.model_config.seed, self.parallel_config.data_parallel_index)
        return CompilationTimes(
            language_model=self.compilation_config.compilation_time,
            encoder=self.compilation_config.encoder_compilation_time,
        )
