"""``axon-smi`` (also ``python -m torch_axon``): Axon's devices, the memory each process holds on
them, and the kernel cache, as ``nvidia-smi`` shows a CUDA machine.

- ``usage``: reads the usage board, where every Axon process publishes its allocator's figures
  (``runtime/src/usage_board.c`` writes it);
- ``cli``: the command itself (``--json``, ``--clear-cache``, ``--warm-cache``).
"""
