"""Keeps AOTAutograd's on-disk cache from saving the two view records torch 2.13 pickles wrongly,
applied by ``register()``.

For a compiled function whose output is a view of an intermediate (or of an input), AOTAutograd
keeps the functionalization records that replay the view (``ViewMeta``) and pickles them into its
cache entry. In torch 2.13 the records of ``_unsafe_view`` and ``resize_``, the two written by
hand, pickle their sizes through a reference to a temporary: the entry gets whatever memory
holds by then. Saving it can crash the process (SIGSEGV in ``pickle.dumps``, in the backward
pass, which AOTAutograd compiles lazily), and every later process that loads it replays the view
with garbage sizes ("shape '[94301731004587, 8530441305511509165, 5]' is invalid for input of
size 30") or, should the garbage make a valid size, a wrong view. A three-dimensional matmul
leaves an ``_unsafe_view``, so ``y = x @ w; return y.transpose(1, 2)`` meets it, on every device.
Found by the compiled model sweep (granite_speech, granite_speech_plus); PyTorch issue 185630,
fixed upstream by pull request 185861 (the records own their sizes).

Until the installed torch has that fix, an entry holding such a record is not saved, as
AOTAutograd does with an entry it cannot pickle: the next process compiles the graph again.
"""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)

# The hand-written ViewMeta classes (torch._C._functionalization) whose pickling reads freed memory
MISPICKLED = frozenset({"_unsafe_view_ViewMeta", "resize__ViewMeta"})
# The first release assumed to have the fix: check when torch moves past it
FIXED_IN = "2.14"

skipped = 0  # entries not saved, for tests


def apply() -> None:
    from torch._functorch._aot_autograd.autograd_cache import AOTAutogradCache
    from torch.torch_version import TorchVersion

    pickle_entry = AOTAutogradCache._pickle_entry
    if TorchVersion(torch.__version__) >= FIXED_IN or getattr(pickle_entry, "axon_guard", False):
        return

    def _pickle_entry(entry, remote):
        global skipped
        if holds_mispickled_view(entry):
            skipped += 1
            log.info("AOTAutograd cache entry not saved: it holds a view record torch pickles wrongly")
            return None
        return pickle_entry(entry, remote)

    _pickle_entry.axon_guard = True
    AOTAutogradCache._pickle_entry = staticmethod(_pickle_entry)


def holds_mispickled_view(entry) -> bool:
    """Whether an AOTAutograd cache entry replays an output's view through a record in MISPICKLED."""
    metadata = getattr(entry, "runtime_metadata", None)
    for info in getattr(metadata, "output_info", None) or ():
        views = getattr(info, "view_meta_sequence", None)
        if views is not None and any(type(view).__name__ in MISPICKLED for view in views.sequence):
            return True
    return False
