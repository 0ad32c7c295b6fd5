// The fused optimizer steps torch.optim takes with fused=True (Adam, AdamW, SGD, Adagrad):
// aten::_fused_adam_, _fused_adamw_, _fused_sgd_, _fused_adagrad_ and their tensor-lr overloads.
// Lists, dtypes and the scalar tensors are sorted out here; the step runs in the runtime's
// fused_optim family (kernels/fused_optim.cl, axon/fused_optim.h), a launch per few tensors.
#include <torch/library.h>

#include <map>
#include <optional>
#include <vector>

#include "axon_glue.h"

extern "C" {
#include "axon/fused_optim.h"
}

namespace axon {
namespace {

using at::Tensor;
using at::TensorList;

// The tensors of one step that the runtime reads, kept alive until the launch is queued: device
// float32 copies of scalars that came on the CPU or in another dtype, contiguous stand-ins for
// strided tensors (copied back after the step).
struct Step {
  const char* op;
  axon_fused_optim_kind kind;
  axon_fused_optim_args args{};
  std::vector<Tensor> keep;
  std::vector<std::pair<Tensor, Tensor>> write_back;  // (original, stand-in)
  axon_fused_optim_scalars scalars{nullptr, nullptr, nullptr};
  c10::Device device{c10::DeviceType::PrivateUse1, 0};

  // A float32 scalar tensor on the step's device holding t's value.
  const void* device_scalar(const Tensor& t, const char* what) {
    TORCH_CHECK(t.numel() == 1, op, ": ", what, " must have one element, got ", t.numel());
    Tensor d = t;
    if (t.device() != device || t.scalar_type() != at::kFloat) d = t.to(device, at::kFloat);
    keep.push_back(d);
    return d.data_ptr();
  }

  void set_scalars(const std::optional<Tensor>& grad_scale,
                   const std::optional<Tensor>& found_inf) {
    if (grad_scale && grad_scale->defined()) {
      scalars.grad_scale = device_scalar(*grad_scale, "grad_scale");
      args.has_grad_scale = 1;
    }
    if (found_inf && found_inf->defined()) {
      scalars.found_inf = device_scalar(*found_inf, "found_inf");
      args.has_found_inf = 1;
    }
  }

  // The learning rate, a number or a tensor: a device tensor is read in the kernel (no
  // synchronisation), a CPU tensor here, as PyTorch's CUDA kernels do.
  void set_lr(std::optional<double> value, const Tensor* tensor) {
    if (!tensor) {
      args.lr = axon_real_of(*value);
    } else if (tensor->device().is_cpu()) {
      args.lr = axon_real_of(tensor->item<double>());
    } else {
      scalars.lr = device_scalar(*tensor, "lr");
      args.has_lr_tensor = 1;
    }
  }

  void check_like(const Tensor& t, const Tensor& param) const {
    TORCH_CHECK(t.device() == device, op, ": expected every tensor on ", device, ", got ",
                t.device());
    TORCH_CHECK(t.scalar_type() == param.scalar_type(), op, ": expected ", param.scalar_type(),
                " tensors like the parameters, got ", t.scalar_type());
    TORCH_CHECK(t.sizes() == param.sizes(), op, ": a tensor of shape ", t.sizes(),
                " goes with a parameter of shape ", param.sizes());
  }

  // t's buffer as the runtime wants it: in place where the parameter's tensors share one dense
  // layout (`direct`), else a contiguous stand-in, written back after the step when the op
  // mutates t (the kernels pair the tensors' elements by memory position).
  void* buffer(const Tensor& t, bool direct, bool mutated) {
    if (direct) return t.data_ptr();
    Tensor c = t.contiguous();
    if (c.is_same(t)) return t.data_ptr();  // already in the stand-ins' (contiguous) order
    keep.push_back(c);
    if (mutated) write_back.emplace_back(t, c);
    return c.data_ptr();
  }

  // Runs the step over the lists: states[s][i] is state s of parameter i (empty lists for
  // absent states), steps[i] its step count (Adam, Adagrad).
  void run(TensorList params, TensorList grads, const std::vector<TensorList>& states,
           TensorList steps) {
    if (params.empty()) return;
    device = params[0].device();
    TORCH_CHECK(grads.size() == params.size(), op, ": ", grads.size(), " gradients for ",
                params.size(), " parameters");
    for (const TensorList& s : states)
      TORCH_CHECK(s.empty() || s.size() == params.size(), op, ": a state list of ", s.size(),
                  " tensors for ", params.size(), " parameters");
    TORCH_CHECK(steps.empty() || steps.size() == params.size(), op, ": ", steps.size(),
                " step counts for ", params.size(), " parameters");
    c10::DeviceGuard guard(device);
    // One runtime call per dtype (torch.optim groups by dtype already; this keeps mixed lists
    // working).
    std::map<at::ScalarType, std::vector<axon_fused_optim_tensor>> by_dtype;
    for (size_t i = 0; i < params.size(); i++) {
      const Tensor& p = params[i];
      at::ScalarType t = p.scalar_type();
      TORCH_CHECK_NOT_IMPLEMENTED(
          t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16, "axon: ", op,
          " is not implemented for ", t, " parameters");
      if (p.numel() == 0) continue;
      std::vector<Tensor> group{p, grads[i]};
      for (const TensorList& s : states)
        if (!s.empty()) group.push_back(s[i]);
      bool direct = true;
      for (const Tensor& t : group) {
        check_like(t, p);
        direct = direct && t.is_non_overlapping_and_dense() && t.strides() == p.strides();
      }
      axon_fused_optim_tensor x{};
      x.numel = p.numel();
      x.param = buffer(p, direct, true);
      x.grad = buffer(grads[i], direct, args.has_grad_scale);
      for (size_t s = 0; s < states.size() && s < 3; s++)
        x.state[s] = states[s].empty() ? nullptr : buffer(states[s][i], direct, true);
      if (!steps.empty()) x.step = device_scalar(steps[i], "a step count");
      by_dtype[t].push_back(x);
    }
    axon_stream_t stream = stream_for(params[0]);
    for (auto& [t, list] : by_dtype)
      AXON_CHECK(axon_fused_optim(stream, to_axon_dtype(t), kind, &args, &scalars, list.data(),
                                  int64_t(list.size())));
    for (auto& [orig, standin] : write_back) orig.copy_(standin);
  }
};

void adam_common(const char* op, bool adamw, TensorList params, TensorList grads,
                 TensorList exp_avgs, TensorList exp_avg_sqs, TensorList max_exp_avg_sqs,
                 TensorList state_steps, std::optional<double> lr, const Tensor* lr_tensor,
                 double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
                 bool maximize, const std::optional<Tensor>& grad_scale,
                 const std::optional<Tensor>& found_inf) {
  Step st{op, AXON_FUSED_OPTIM_ADAM};
  st.args.beta1 = axon_real_of(beta1);
  st.args.beta2 = axon_real_of(beta2);
  st.args.weight_decay = axon_real_of(weight_decay);
  st.args.eps = axon_real_of(eps);
  st.args.adamw = adamw;
  st.args.amsgrad = amsgrad;
  st.args.maximize = maximize;
  if (params.empty()) return;
  st.device = params[0].device();
  st.set_lr(lr, lr_tensor);
  st.set_scalars(grad_scale, found_inf);
  TORCH_CHECK(exp_avgs.size() == params.size() && exp_avg_sqs.size() == params.size(), op,
              ": expected exp_avgs and exp_avg_sqs for every parameter");
  TORCH_CHECK(!amsgrad || max_exp_avg_sqs.size() == params.size(), op,
              ": amsgrad needs max_exp_avg_sqs for every parameter");
  TORCH_CHECK(state_steps.size() == params.size(), op, ": expected a step count per parameter");
  st.run(params, grads, {exp_avgs, exp_avg_sqs, amsgrad ? max_exp_avg_sqs : TensorList()},
         state_steps);
}

#define AXON_ADAM_OP(NAME, ADAMW)                                                              \
  void NAME(TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,  \
            TensorList max_exp_avg_sqs, TensorList state_steps, double lr, double beta1,       \
            double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,        \
            const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) { \
    adam_common("_" #NAME, ADAMW, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,       \
                state_steps, lr, nullptr, beta1, beta2, weight_decay, eps, amsgrad, maximize,  \
                grad_scale, found_inf);                                                        \
  }                                                                                            \
  void NAME##_tensor_lr(                                                                       \
      TensorList params, TensorList grads, TensorList exp_avgs, TensorList exp_avg_sqs,        \
      TensorList max_exp_avg_sqs, TensorList state_steps, const Tensor& lr, double beta1,      \
      double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,              \
      const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {       \
    adam_common("_" #NAME, ADAMW, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,       \
                state_steps, std::nullopt, &lr, beta1, beta2, weight_decay, eps, amsgrad,      \
                maximize, grad_scale, found_inf);                                              \
  }
AXON_ADAM_OP(fused_adam_, false)
AXON_ADAM_OP(fused_adamw_, true)
#undef AXON_ADAM_OP

void sgd_common(TensorList params, TensorList grads, TensorList momentum_buffers,
                double weight_decay, double momentum, std::optional<double> lr,
                const Tensor* lr_tensor, double dampening, bool nesterov, bool maximize,
                bool is_first_step, const std::optional<Tensor>& grad_scale,
                const std::optional<Tensor>& found_inf) {
  if (params.empty()) return;
  Step st{"_fused_sgd_", AXON_FUSED_OPTIM_SGD};
  st.device = params[0].device();
  st.args.weight_decay = axon_real_of(weight_decay);
  st.args.momentum = axon_real_of(momentum);
  st.args.dampening = axon_real_of(dampening);
  st.args.nesterov = nesterov;
  st.args.maximize = maximize;
  st.args.is_first_step = is_first_step;
  st.set_lr(lr, lr_tensor);
  st.set_scalars(grad_scale, found_inf);
  TORCH_CHECK(momentum == 0 || momentum_buffers.size() == params.size(),
              "_fused_sgd_: momentum needs a momentum buffer per parameter");
  st.run(params, grads, {momentum == 0 ? TensorList() : momentum_buffers}, {});
}

void fused_sgd_(TensorList params, TensorList grads, TensorList momentum_buffers,
                double weight_decay, double momentum, double lr, double dampening, bool nesterov,
                bool maximize, bool is_first_step, const std::optional<Tensor>& grad_scale,
                const std::optional<Tensor>& found_inf) {
  sgd_common(params, grads, momentum_buffers, weight_decay, momentum, lr, nullptr, dampening,
             nesterov, maximize, is_first_step, grad_scale, found_inf);
}

void fused_sgd_tensor_lr(TensorList params, TensorList grads, TensorList momentum_buffers,
                         double weight_decay, double momentum, const Tensor& lr, double dampening,
                         bool nesterov, bool maximize, bool is_first_step,
                         const std::optional<Tensor>& grad_scale,
                         const std::optional<Tensor>& found_inf) {
  sgd_common(params, grads, momentum_buffers, weight_decay, momentum, std::nullopt, &lr, dampening,
             nesterov, maximize, is_first_step, grad_scale, found_inf);
}

void adagrad_common(TensorList params, TensorList grads, TensorList state_sums,
                    TensorList state_steps, std::optional<double> lr, const Tensor* lr_tensor,
                    double lr_decay, double weight_decay, double eps, bool maximize,
                    const std::optional<Tensor>& grad_scale,
                    const std::optional<Tensor>& found_inf) {
  if (params.empty()) return;
  Step st{"_fused_adagrad_", AXON_FUSED_OPTIM_ADAGRAD};
  st.device = params[0].device();
  st.args.lr_decay = axon_real_of(lr_decay);
  st.args.weight_decay = axon_real_of(weight_decay);
  st.args.eps = axon_real_of(eps);
  st.args.maximize = maximize;
  st.set_lr(lr, lr_tensor);
  st.set_scalars(grad_scale, found_inf);
  TORCH_CHECK(state_sums.size() == params.size() && state_steps.size() == params.size(),
              "_fused_adagrad_: expected a state sum and a step count per parameter");
  st.run(params, grads, {state_sums}, state_steps);
}

void fused_adagrad_(TensorList params, TensorList grads, TensorList state_sums,
                    TensorList state_steps, double lr, double lr_decay, double weight_decay,
                    double eps, bool maximize, const std::optional<Tensor>& grad_scale,
                    const std::optional<Tensor>& found_inf) {
  adagrad_common(params, grads, state_sums, state_steps, lr, nullptr, lr_decay, weight_decay, eps,
                 maximize, grad_scale, found_inf);
}

void fused_adagrad_tensor_lr(TensorList params, TensorList grads, TensorList state_sums,
                             TensorList state_steps, const Tensor& lr, double lr_decay,
                             double weight_decay, double eps, bool maximize,
                             const std::optional<Tensor>& grad_scale,
                             const std::optional<Tensor>& found_inf) {
  adagrad_common(params, grads, state_sums, state_steps, std::nullopt, &lr, lr_decay, weight_decay,
                 eps, maximize, grad_scale, found_inf);
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("_fused_adam_", fused_adam_);
  m.impl("_fused_adam_.tensor_lr", fused_adam__tensor_lr);
  m.impl("_fused_adamw_", fused_adamw_);
  m.impl("_fused_adamw_.tensor_lr", fused_adamw__tensor_lr);
  m.impl("_fused_sgd_", fused_sgd_);
  m.impl("_fused_sgd_.tensor_lr", fused_sgd_tensor_lr);
  m.impl("_fused_adagrad_", fused_adagrad_);
  m.impl("_fused_adagrad_.tensor_lr", fused_adagrad_tensor_lr);
}

}  // namespace axon
