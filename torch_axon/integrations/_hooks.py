"""Run a function on a module right after it is imported (a post-import hook).

Axon loads inside ``import torch``, before a script imports accelerate or transformers, so it
cannot adapt those libraries at start-up; and importing them then would cost seconds in every
process that uses torch. Instead a finder at the front of ``sys.meta_path`` recognises the few
module names that have a hook, lets the normal finders locate the module, and wraps its loader
so that the hook runs once the module's code has executed, before the importer sees it. A
module that is already imported gets its hook at once.

A hook that raises is reported as a warning naming the module and its version: a library whose
internals changed then keeps its own behaviour, it never fails to import because of Axon.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import warnings
from collections.abc import Callable

Hook = Callable[[object], None]

_hooks: dict[str, list[Hook]] = {}
_lock = threading.Lock()


def _run(name: str, module) -> None:
    for hook in _hooks.pop(name, []):
        try:
            hook(module)
        except Exception as error:  # noqa: BLE001  (any failure must stay a warning)
            package = name.partition(".")[0]
            try:
                from importlib.metadata import version

                found = version(package)
            except Exception:  # noqa: BLE001
                found = "unknown version"
            warnings.warn(
                f"torch_axon: could not adapt {name} ({package} {found}) to axon: {error!r}. "
                f"{package} keeps its own device choice; see docs/ecosystem.md for the explicit settings.",
                RuntimeWarning,
                stacklevel=2,
            )


class _Loader(importlib.abc.Loader):
    """The module's own loader, with the hook run after ``exec_module``; every other attribute
    (``get_source``, ``is_package``, resource readers ...) is the original loader's."""

    def __init__(self, loader, name: str):
        self._loader = loader
        self._name = name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _run(self._name, module)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _hooks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, name)
        return spec


_finder = _Finder()


def when_imported(name: str, hook: Hook) -> None:
    """Calls ``hook(module)`` once module ``name`` is imported: now if it already is."""
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            _hooks.setdefault(name, []).append(hook)
            if _finder not in sys.meta_path:
                sys.meta_path.insert(0, _finder)
            return
    _hooks.setdefault(name, []).append(hook)
    _run(name, module)
