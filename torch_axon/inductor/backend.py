"""The Dynamo backend named "axon": Inductor with axon's code generators registered first.

``torch.compile(model)`` with the default "inductor" backend works as well (Inductor finds the
axon generators through the device module); this name exists for
``torch.compile(backend="axon")`` and ``torch.compiler.set_default_backend("axon")``.
"""

from __future__ import annotations

from . import register


def axon(gm, example_inputs, **kwargs):
    from torch._inductor.compile_fx import compile_fx

    register()
    return compile_fx(gm, example_inputs, **kwargs)
