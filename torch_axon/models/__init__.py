"""Model sweeps: every architecture of Hugging Face transformers' auto mappings, built tiny
with random weights, run on the CPU and on axon and compared (``python -m torch_axon.models``;
docs/models.md is its report)."""
