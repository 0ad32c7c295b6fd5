"""Optional integrations of Axon with training libraries; each module imports only where its library is installed.

``install()`` runs when Axon loads (``torch_axon._register``). It imports none of these
libraries: each integration only registers post-import hooks (``_hooks``), so a library is
adapted to axon the moment a script imports it (``huggingface``: accelerate and transformers;
``lightning``; ``torchtitan``), and a process that does not use it pays nothing.
"""

_INTEGRATIONS = ("huggingface", "lightning", "torchtitan")


def install() -> None:
    """Registers the import hooks of every integration present; safe to call again. One that
    fails is a warning: ``import torch`` must never fail because of an optional integration."""
    import importlib
    import importlib.util
    import warnings

    for name in _INTEGRATIONS:
        if importlib.util.find_spec(f"{__name__}.{name}") is None:
            continue
        try:
            importlib.import_module(f"{__name__}.{name}").install()
        except Exception as error:  # noqa: BLE001
            message = f"torch_axon: the {name} integration could not be set up: {error!r}"
            warnings.warn(message, RuntimeWarning, stacklevel=2)
