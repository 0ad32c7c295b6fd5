"""Optional integrations of Axon with training libraries; each module imports only where its library is installed.

``install()`` runs when Axon loads (``torch_axon._register``). It imports no library: it only
registers post-import hooks (``_hooks``), so accelerate and transformers are adapted to axon the
moment a script imports them (``huggingface``), and cost nothing in a process that does not.
"""


def install() -> None:
    """Registers the import hooks of the integrations that need one; safe to call again."""
    from . import huggingface

    huggingface.install()
