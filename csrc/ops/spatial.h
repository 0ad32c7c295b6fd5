// The geometry of the spatial ops, shared by pool.cpp and resample.cpp: an axon_spatial_desc
// (runtime/include/axon/axon.h) from an input-space and an output-space tensor, and writing
// through a dense temporary.
#pragma once

#include <ATen/native/Resize.h>

#include "axon_glue.h"

namespace axon {

// Geometry of an input-space tensor and an output-space tensor with nd spatial dims, batched
// ([n, c, ...]) or not ([c, ...]).
inline axon_spatial_desc spatial(const at::Tensor& in_space, const at::Tensor& out_space, int nd) {
  TORCH_CHECK(in_space.dim() == nd + 1 || in_space.dim() == nd + 2, "expected a ", nd + 1, "-d or ",
              nd + 2, "-d input, got ", in_space.dim(), " dims");
  TORCH_CHECK(out_space.dim() == in_space.dim(), "input and output of different ranks");
  axon_spatial_desc d{};
  d.nd = nd;
  bool batched = in_space.dim() == nd + 2;
  int lead = batched ? 2 : 1;
  d.n = batched ? in_space.size(0) : 1;
  d.c = in_space.size(lead - 1);
  TORCH_CHECK(out_space.size(lead - 1) == d.c && (!batched || out_space.size(0) == d.n),
              "input and output of different batch or channel sizes");
  d.in_strides[0] = batched ? in_space.stride(0) : 0;
  d.out_strides[0] = batched ? out_space.stride(0) : 0;
  d.in_strides[1] = in_space.stride(lead - 1);
  d.out_strides[1] = out_space.stride(lead - 1);
  for (int i = 0; i < nd; i++) {
    d.in[i] = in_space.size(lead + i);
    d.out[i] = out_space.size(lead + i);
    d.in_strides[2 + i] = in_space.stride(lead + i);
    d.out_strides[2 + i] = out_space.stride(lead + i);
    d.kernel[i] = d.stride[i] = d.dilation[i] = 1;
  }
  d.input = in_space.data_ptr();
  d.output = out_space.data_ptr();
  return d;
}

inline axon_dtype rt(const at::Tensor& t) {
  return to_axon_dtype(t.scalar_type());
}

// Runs fn on `out` directly when it is non-overlapping and dense, else on a contiguous
// temporary copied back.
template <typename F>
void into(at::Tensor& out, F fn) {
  if (out.is_non_overlapping_and_dense()) {
    fn(out);
    return;
  }
  at::Tensor tmp = at::empty(out.sizes(), out.options());
  fn(tmp);
  out.copy_(tmp);
}

// Sizes an out= result; one sized here (not one the caller shaped) takes the memory format
// PyTorch's CPU gives it: the input's suggested format for pooling and padding.
inline void resize_in_format(at::Tensor& out, at::IntArrayRef shape, at::MemoryFormat format) {
  if (at::native::resize_output(out, shape)) out.resize_(shape, format);
}

}  // namespace axon
