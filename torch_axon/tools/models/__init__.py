"""Model sweeps: every architecture of Hugging Face transformers' auto mappings (text, images,
audio, images or audio inside text), built tiny with random weights, and one small model of each
torchvision and timm family, run on the CPU and on axon and compared (``python -m
torch_axon.tools.models``; docs/models.md is its report).

compare.py drives one model and judges it; families.py lists the families; hf.py,
torchvision_models.py and timm_models.py build their models; inputs.py makes Hugging Face
inputs; tiny_configs.py and tiny_vision.py shrink configs; model_zoo.py brings in torchvision and
timm; report.py writes the report."""
