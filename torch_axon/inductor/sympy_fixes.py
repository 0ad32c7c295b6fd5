"""A repair to Inductor's sympy functions that Axon's kernels need, applied by ``register()``.

On any device but the CPU, Inductor lowers ``torch.cat`` pointwise (``pointwise_cat``): the load
of each piece is indexed by ``Identity(i - offset)``, Identity keeping the simplifier from
expanding it. Where that index sits inside a ``Min`` or ``Max`` (a replicate pad or a clamp of
the piece fused into the cat), substituting numbers for the loop variables, as Inductor's loop
simplification (``SizeVarAllocator.stride_vars``) does, builds ``Max(Identity(-32) - 1, 0)``,
and ``Max`` refuses it: "The argument '((-32)) - 1' is not comparable" (or '-((0))', '-1 +
((1))'). sympy cannot order a sum that holds an Identity, which it cannot evaluate. The CPU never
meets this, since Inductor concatenates there with copies (ConcatKernel). An Identity of a
number has nothing left to protect from expansion: it becomes the number.
"""

from __future__ import annotations

import sympy


def apply() -> None:
    """Makes Identity of a number evaluate to the number (unless torch has its own eval by now)."""
    from torch.utils._sympy.functions import Identity

    if "eval" not in Identity.__dict__:
        Identity.eval = classmethod(_identity_eval)


def _identity_eval(cls, arg: sympy.Expr) -> sympy.Expr | None:
    return arg if isinstance(arg, sympy.Number) else None
