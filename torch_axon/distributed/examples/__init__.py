"""Small runnable examples of torch.distributed on axon (see train.py)."""
