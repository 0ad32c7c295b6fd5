"""``ReductionKernel``: map, reduce, identity and post-map expressions over chosen dimensions.

    l2 = ReductionKernel("T x", "T y", map_expr="x * x", reduce_expr="a + b",
                         post_map_expr="y = sqrt(a)", identity="0", name="l2norm")
    l2(x, dim=1)

Two launches, as Axon's own reductions split the work: the first gives each work-item a chunk
of one output's elements (map, then reduce into an accumulator of `reduce_type`, T by
default), the second combines a row's chunks and applies the post-map. The chunking follows
the device class (as runtime/src/ops/reduce.c chooses between a work-item and a work-group per
output): on a CPU a work-item walks a contiguous block, which its cache and prefetcher like; on
a GPU neighbouring work-items take neighbouring elements (interleaved), so loads coalesce, and
many more chunks keep the device's threads busy. Inputs broadcast; the reduced dimensions are
moved last, which copies an input whose memory is not already laid out that way.
"""

from __future__ import annotations

import functools
import hashlib

import torch

from . import registry
from .elementwise import _CONCRETE, _IDENT, _params
from .library import compile_shader

_SOURCE = """{preamble}
typedef {acc} axon_acc_t;
__kernel void axon_partial({inputs}__global axon_acc_t *axon_partial_out, long axon_n, long axon_chunks,
                           long axon_chunk_len, int axon_interleaved, long axon_items) {{
  long axon_item = get_global_id(0);
  if (axon_item >= axon_items) return;
  long axon_row = axon_item / axon_chunks, axon_c = axon_item - axon_row * axon_chunks;
  long axon_base = axon_row * axon_n;
  long axon_first = axon_interleaved ? axon_c : axon_c * axon_chunk_len;
  long axon_step = axon_interleaved ? axon_chunks : 1;
  long axon_end = axon_interleaved ? axon_n : min(axon_n, axon_first + axon_chunk_len);
  axon_acc_t a = (axon_acc_t)({identity});
  for (long axon_j = axon_first; axon_j < axon_end; axon_j += axon_step) {{
    {loads}
    axon_acc_t b = (axon_acc_t)({map_expr});
    a = ({reduce_expr});
  }}
  axon_partial_out[axon_item] = a;
}}
__kernel void axon_final(__global const axon_acc_t *axon_partial_in, __global {out_type} *axon_out,
                         long axon_chunks, long axon_rows) {{
  long axon_row = get_global_id(0);
  if (axon_row >= axon_rows) return;
  axon_acc_t a = (axon_acc_t)({identity});
  for (long axon_c = 0; axon_c < axon_chunks; axon_c++) {{
    axon_acc_t b = axon_partial_in[axon_row * axon_chunks + axon_c];
    a = ({reduce_expr});
  }}
  {out_type} {out_name} = ({out_type})a;
  {post_map_expr};
  axon_out[axon_row] = {out_name};
}}
"""

# OpenCL C type of each dtype a reduction reads directly; float16 and bfloat16 inputs are read
# as float32 (converted first).
_CTYPES = {v: k for k, v in _CONCRETE.items() if k != "half"}
_WIDENED = {torch.float16: torch.float32, torch.bfloat16: torch.float32}


class ReductionKernel:
    def __init__(
        self,
        inputs: str,
        output: str,
        map_expr: str,
        reduce_expr: str,
        identity: str,
        name: str,
        *,
        post_map_expr: str | None = None,
        reduce_type: str | None = None,
        preamble: str = "",
    ) -> None:
        if not _IDENT.match(name):
            raise ValueError(f"ReductionKernel name {name!r}: an identifier of at most 40 characters")
        self.name, self.inputs = name, _params(inputs, "inputs")
        outputs = _params(output, "output")
        if len(outputs) != 1:
            raise ValueError(f"ReductionKernel {name}: one output")
        self.output = outputs[0]
        self.map_expr, self.reduce_expr, self.identity = map_expr, reduce_expr, identity
        self.post_map_expr = post_map_expr or f"{self.output[1]} = a"
        self.reduce_type, self.preamble = reduce_type, preamble
        placeholders = {t for t, _ in [*self.inputs, self.output] if t not in _CONCRETE}
        if len(placeholders) > 1:
            raise ValueError(f"ReductionKernel {name}: one type placeholder at most, got {sorted(placeholders)}")
        self.placeholder = placeholders.pop() if placeholders else None
        text = "\0".join(
            [inputs, output, map_expr, reduce_expr, identity, name, self.post_map_expr, str(reduce_type), preamble]
        )
        self.digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        self._libraries: dict[tuple, tuple] = {}
        self.op = self._register_op()

    def __repr__(self) -> str:
        return f"<axon ReductionKernel {self.name}: map {self.map_expr!r}, reduce {self.reduce_expr!r}>"

    # ---- source ------------------------------------------------------------------------------
    def _ctype(self, type_name: str, bound: torch.dtype) -> str:
        return _CTYPES[bound] if type_name == self.placeholder else type_name

    def _library(self, dtype: torch.dtype, device: int):
        key = (dtype, device)
        if key not in self._libraries:
            self._libraries[key] = self._build(dtype, device)
        return self._libraries[key]

    def _build(self, dtype: torch.dtype, device: int):
        loads = " ".join(f"{self._ctype(t, dtype)} {n} = axon_in_{n}[axon_base + axon_j];" for t, n in self.inputs)
        inputs = "".join(f"__global const {self._ctype(t, dtype)} *axon_in_{n}, " for t, n in self.inputs)
        out_type = self._ctype(self.output[0], dtype)
        acc = self.reduce_type or out_type
        if self.reduce_type == self.placeholder:
            acc = _CTYPES[dtype]
        source = _SOURCE.format(
            preamble=self.preamble,
            acc=acc,
            inputs=inputs,
            loads=loads,
            identity=self.identity,
            map_expr=self.map_expr,
            reduce_expr=self.reduce_expr,
            out_type=out_type,
            out_name=self.output[1],
            post_map_expr=self.post_map_expr,
        )
        if self.placeholder:
            source = f"#define {self.placeholder} {_CTYPES[dtype]}\n{source}"
        try:
            return compile_shader(source, device=device), acc
        except RuntimeError as e:
            raise RuntimeError(f"ReductionKernel {self.name}: the generated kernels did not build:\n{e}") from None

    def _dtype(self, tensors) -> torch.dtype:
        if self.placeholder is None:
            return _CONCRETE[self.inputs[0][0]]
        dtype = tensors[0].dtype
        for t in tensors[1:]:
            dtype = torch.promote_types(dtype, t.dtype)
        return dtype

    def _out_dtype(self, bound: torch.dtype) -> torch.dtype:
        t = self.output[0]
        return bound if t == self.placeholder else _CONCRETE[t]

    # ---- calling -----------------------------------------------------------------------------
    def __call__(self, *args, dim=None, keepdim: bool = False) -> torch.Tensor:
        if len(args) != len(self.inputs):
            raise TypeError(f"ReductionKernel {self.name} takes {len(self.inputs)} inputs, got {len(args)}")
        for (_, n), a in zip(self.inputs, args, strict=True):
            if not isinstance(a, torch.Tensor):
                raise TypeError(f"ReductionKernel {self.name}: input {n} must be a tensor")
            if a.device.type != "axon":
                raise ValueError(f"ReductionKernel {self.name}: input {n} is on {a.device}; move it to axon first")
        dims = None if dim is None else [dim] if isinstance(dim, int) else list(dim)
        return self.op(*args, dims, keepdim)

    def _shape(self, tensors, dims, keepdim):
        shape = torch.broadcast_shapes(*(t.shape for t in tensors))
        ndim = len(shape)
        reduced = sorted({d % ndim for d in dims} if dims else set(range(ndim))) if ndim else []
        kept = [d for d in range(ndim) if d not in reduced]
        out_shape = [1 if d in reduced else shape[d] for d in range(ndim)] if keepdim else [shape[d] for d in kept]
        return shape, reduced, kept, out_shape

    def _fake(self, *args):
        *tensors, dims, keepdim = args
        _, _, _, out_shape = self._shape(tensors, dims, keepdim)
        return tensors[0].new_empty(out_shape, dtype=self._out_dtype(self._dtype(tensors)))

    def _run(self, *args):
        *tensors, dims, keepdim = args
        shape, reduced, kept, out_shape = self._shape(tensors, dims, keepdim)
        bound = self._dtype(tensors)
        read = _WIDENED.get(bound, bound)
        device = tensors[0].device
        rows = 1
        for d in kept:
            rows *= shape[d]
        n = 1
        for d in reduced:
            n *= shape[d]
        order = kept + reduced
        flat = [
            t.to(read).expand(shape).permute(order).contiguous().view(rows, n) if shape else t.to(read).reshape(1, 1)
            for t in tensors
        ]
        lib, _acc = self._library(read, device.index)
        out_dtype = self._out_dtype(read)
        out = torch.empty(rows, dtype=out_dtype, device=device)
        if rows:
            chunks, chunk_len, interleaved = _chunking(rows, n, device.index)
            partial = torch.empty(rows * chunks, dtype=_acc_dtype(_acc, read), device=device)
            items = rows * chunks
            lib.axon_partial(*flat, partial, n, chunks, chunk_len, int(interleaved), items, threads=items)
            lib.axon_final(partial, out, chunks, rows, threads=rows)
        result = out.view(out_shape)
        final = self._out_dtype(bound)
        return result if final == out_dtype else result.to(final)

    def _register_op(self) -> torch._ops.OpOverload:
        schema = "(" + ", ".join(f"Tensor {n}" for _, n in self.inputs) + ", int[]? dim, bool keepdim) -> Tensor"
        return registry.register(self.name, self.digest, schema, self._run, self._fake)


def _acc_dtype(acc: str, read: torch.dtype) -> torch.dtype:
    if acc in _CONCRETE:
        return _CONCRETE[acc]
    raise ValueError(f"ReductionKernel: reduce_type {acc!r} is not one of {sorted(_CONCRETE)}")


@functools.cache
def _device_class(device: int) -> tuple[bool, int]:
    props = torch.axon.get_device_properties(device)
    return props.is_cpu, props.max_compute_units


def _chunking(rows: int, n: int, device: int) -> tuple[int, int, bool]:
    """(chunks per row, elements per chunk, interleaved): enough work-items to fill the device
    (four per core on a CPU, 64 per compute unit on a GPU), none shorter than a useful run."""
    is_cpu, units = _device_class(device)
    want_items, shortest = (4 * units, 1024) if is_cpu else (64 * units * 64, 64)
    chunks = max(1, min(-(-want_items // rows), n // shortest))
    chunk_len = -(-n // chunks) if n else 0
    return chunks, chunk_len, not is_cpu
