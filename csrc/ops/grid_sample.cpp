// Grid sampling, 2-d and 3-d, forward and backward: checks and layouts here, the sampling in
// the runtime's grid_sample family (kernels/grid_sample.cl, axon/grid_sample.h).
#include <ATen/Context.h>
#include <torch/library.h>

#include "axon_glue.h"
#include "nn_checks.h"

extern "C" {
#include "axon/grid_sample.h"
}

namespace axon {
namespace {

using at::Tensor;

axon_grid_sample_desc grid_desc(const Tensor& input, const Tensor& grid, int64_t mode,
                                int64_t padding, bool align_corners) {
  int nd = int(input.dim()) - 2, lead = 3 - nd;
  axon_grid_sample_desc d{};
  axon_grid_sample_args& a = d.args;
  a.n = input.size(0);
  a.channels = input.size(1);
  a.nd = nd;
  for (int k = 0; k < 3; k++) {
    a.in_size[k] = k < lead ? 1 : input.size(2 + k - lead);
    a.out_size[k] = k < lead ? 1 : grid.size(1 + k - lead);
    a.in_strides[2 + k] = k < lead ? 0 : input.stride(2 + k - lead);
    a.grid_strides[1 + k] = k < lead ? 0 : grid.stride(1 + k - lead);
  }
  a.in_strides[0] = input.stride(0);
  a.in_strides[1] = input.stride(1);
  a.grid_strides[0] = grid.stride(0);
  a.grid_coord_stride = grid.stride(-1);
  a.mode = mode;
  a.padding = padding;
  a.align_corners = align_corners;
  d.input = data_or_null(input);
  d.grid = data_or_null(grid);
  return d;
}

void check_grid(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, int nd) {
  TORCH_CHECK(input.device() == grid.device(),
              "grid_sampler(): expected input and grid to be on same device, but input is on ",
              input.device(), " and grid is on ", grid.device());
  TORCH_CHECK(input.scalar_type() == grid.scalar_type(),
              "grid_sampler(): expected input and grid to have same dtype, but input has ",
              input.scalar_type(), " and grid has ", grid.scalar_type());
  TORCH_CHECK(input.dim() == nd + 2 && grid.dim() == nd + 2, "grid_sampler(): expected ", nd + 2,
              "D input and grid with same number of "
              "dimensions, but got input with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(input.size(0) == grid.size(0),
              "grid_sampler(): expected grid and input to have same batch size, but got input "
              "with sizes ",
              input.sizes(), " and grid with sizes ", grid.sizes());
  TORCH_CHECK(grid.size(-1) == nd, "grid_sampler(): expected grid to have size ", nd,
              " in last dimension, but got grid with sizes ", grid.sizes());
  for (int64_t i = 2; i < input.dim(); i++)
    TORCH_CHECK(input.size(i) > 0,
                "grid_sampler(): expected input to have non-empty spatial "
                "dimensions, but input has sizes ",
                input.sizes(), " with dimension ", i, " being empty");
  TORCH_CHECK(mode >= 0 && mode <= 2, "grid_sampler(): unknown interpolation mode ", mode);
  TORCH_CHECK(padding >= 0 && padding <= 2, "grid_sampler(): unknown padding mode ", padding);
  TORCH_CHECK(mode != 2 || nd == 2, "grid_sampler(): bicubic interpolation only supports 4D input");
  check_float(input, "grid_sampler");
}

template <int ND>
Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                    bool align_corners) {
  c10::DeviceGuard guard(input.device());
  check_grid(input, grid, mode, padding, ND);
  std::vector<int64_t> shape{input.size(0), input.size(1)};
  for (int k = 1; k <= ND; k++) shape.push_back(grid.size(k));
  Tensor out = at::empty(shape, input.options());
  axon_grid_sample_desc d = grid_desc(input, grid, mode, padding, align_corners);
  d.output = data_or_null(out);
  AXON_CHECK(axon_grid_sample(stream_for(input), to_axon_dtype(input.scalar_type()),
                              AXON_GRID_SAMPLE_FORWARD, &d));
  return out;
}

template <int ND>
std::tuple<Tensor, Tensor> grid_sampler_backward(const Tensor& grad, const Tensor& input,
                                                 const Tensor& grid, int64_t mode, int64_t padding,
                                                 bool align_corners,
                                                 std::array<bool, 2> output_mask) {
  c10::DeviceGuard guard(input.device());
  // The input gradient scatters with a compare-and-swap float add (order varies run to run).
  if (output_mask[0])
    at::globalContext().alertNotDeterministic(ND == 2 ? "grid_sampler_2d_backward_axon"
                                                      : "grid_sampler_3d_backward_axon");
  check_grid(input, grid, mode, padding, ND);
  Tensor acc = at::zeros(input.sizes(), input.options().dtype(acc_type(input.scalar_type())));
  Tensor grad_grid = at::empty(grid.sizes(), grid.options());
  axon_grid_sample_desc d = grid_desc(input, grid, mode, padding, align_corners);
  // grad_output strides (n, c, d, h, w), depth 1 for 2-d.
  for (int k = 0, j = 0; k < 5; k++)
    d.args.grad_out_strides[k] = ND == 2 && k == 2 ? 0 : grad.stride(j++);
  d.grad_output = data_or_null(grad);
  d.input_grad_acc = data_or_null(acc);
  d.grad_grid = data_or_null(grad_grid);
  AXON_CHECK(axon_grid_sample(stream_for(input), to_axon_dtype(input.scalar_type()),
                              AXON_GRID_SAMPLE_BACKWARD, &d));
  Tensor grad_input;
  if (output_mask[0]) grad_input = acc.to(input.scalar_type());
  return {grad_input, grad_grid};
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("grid_sampler_2d", grid_sampler<2>);
  m.impl("grid_sampler_2d_backward", grid_sampler_backward<2>);
  m.impl("grid_sampler_3d", grid_sampler<3>);
  m.impl("grid_sampler_3d_backward", grid_sampler_backward<3>);
}

}  // namespace axon
