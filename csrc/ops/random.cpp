// Random numbers: the float distributions (normal_, uniform_, bernoulli_ with a float p) and
// dropout; integer random numbers and the distributions built on them: random_ (all forms;
// randint uses random_.from), randperm, exponential_, cauchy_, log_normal_, geometric_,
// multinomial, and the tensor-parameter forms of bernoulli and normal. Values come from the
// device's Philox generator (kernels/random.cl), so the same seed gives the same numbers.
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <limits>

#include "axon_glue.h"

extern "C" {
#include "axon/random.h"
}

namespace axon {
namespace {

using at::Tensor;

// Fills self from the Philox stream, one counter per element: `launch(stream, dtype, desc,
// seed, offset)` writes a dense tensor of dtype `compute` (self's, or a floating type that
// integer results are converted from).
template <typename Launch>
Tensor& philox_fill(Tensor& self, at::ScalarType compute, const std::optional<at::Generator>& gen,
                    Launch launch) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(compute, self.device().index());
  auto [seed, offset] = philox_reserve(gen, self.device().index(), uint64_t(self.numel()));
  Tensor target = self.is_non_overlapping_and_dense() && compute == self.scalar_type()
                      ? self
                      : at::empty(self.sizes(), self.options().dtype(compute));
  axon_ew_desc d = make_ew_desc_same_shape(target, {}, true);
  d.ninputs = 0;
  AXON_CHECK(launch(stream_for(self), to_axon_dtype(compute), &d, seed, offset));
  if (!target.is_same(self)) self.copy_(target);
  return self;
}

// self = base + (64 random bits mod range); range 0 means all 2^64 values.
Tensor& random_int_fill(Tensor& self, uint64_t range, int64_t base,
                        const std::optional<at::Generator>& gen) {
  return philox_fill(
      self, self.scalar_type(), gen,
      [&](axon_stream_t s, axon_dtype t, const axon_ew_desc* d, uint64_t seed, uint64_t offset) {
        return axon_random_int(s, t, d, seed, offset, range, base);
      });
}

// The largest value random_ may produce for a dtype: 2^digits for floating types (every
// integer up to it is exact), the maximum for integers.
int64_t random_max(at::ScalarType t) {
  int64_t hi = 0;
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, t, "random_", [&] {
    if constexpr (std::is_same_v<scalar_t, bool>)
      hi = 1;
    else if constexpr (std::is_floating_point_v<scalar_t> || std::is_same_v<scalar_t, at::Half> ||
                       std::is_same_v<scalar_t, at::BFloat16>)
      hi = int64_t(1) << std::numeric_limits<scalar_t>::digits;
    else
      hi = int64_t(std::numeric_limits<scalar_t>::max());
  });
  return hi;
}

Tensor& ax_random_(Tensor& self, std::optional<at::Generator> gen) {
  return random_int_fill(self, uint64_t(random_max(self.scalar_type())) + 1, 0, gen);
}

Tensor& ax_random_from(Tensor& self, int64_t from, std::optional<int64_t> to,
                       std::optional<at::Generator> gen) {
  if (to.has_value()) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but got from=", from,
                " >= to=", *to);
    return random_int_fill(self, uint64_t(*to) - uint64_t(from), from, gen);
  }
  int64_t hi = random_max(self.scalar_type());
  TORCH_CHECK(from <= hi, "random_ expects 'from' to be at most ", hi, ", but got from=", from);
  return random_int_fill(self, uint64_t(hi) - uint64_t(from) + 1, from, gen);  // 2^64 wraps to 0
}

Tensor& ax_random_to(Tensor& self, int64_t to, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 < to, "random_ expects 'from' to be less than 'to', but got from=0 >= to=", to);
  return random_int_fill(self, uint64_t(to), 0, gen);
}

Tensor& distribution_fill(Tensor& self, axon_distribution kind, double a, double b,
                          const std::optional<at::Generator>& gen,
                          at::ScalarType compute = at::ScalarType::Undefined) {
  if (compute == at::ScalarType::Undefined) compute = self.scalar_type();
  return philox_fill(
      self, compute, gen,
      [&](axon_stream_t s, axon_dtype t, const axon_ew_desc* d, uint64_t seed, uint64_t offset) {
        return axon_random_distribution(s, t, kind, d, seed, offset, a, b);
      });
}

Tensor& ax_exponential_(Tensor& self, double lambd, std::optional<at::Generator> gen) {
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "exponential_ not implemented for '", self.scalar_type(), "'");
  return philox_fill(
      self, self.scalar_type(), gen,
      [&](axon_stream_t s, axon_dtype t, const axon_ew_desc* d, uint64_t seed, uint64_t offset) {
        return axon_random(s, t, AXON_RANDOM_EXPONENTIAL, d, seed, offset, lambd, 0.0);
      });
}

Tensor& ax_cauchy_(Tensor& self, double median, double sigma, std::optional<at::Generator> gen) {
  TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "Cauchy distribution is a continuous probability distribution. dtype must be a "
              "floating point but you specified ",
              self.dtype());
  return distribution_fill(self, AXON_DISTRIBUTION_CAUCHY, median, sigma, gen);
}

Tensor& ax_log_normal_(Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  TORCH_CHECK(at::isFloatingType(self.scalar_type()),
              "log_normal_ expects a floating point tensor, but got ", self.dtype());
  return distribution_fill(self, AXON_DISTRIBUTION_LOG_NORMAL, mean, std, gen);
}

// Integer tensors get their values through a double (float without fp64) tensor: the
// trial counts are integers, exact there up to 2^53.
Tensor& ax_geometric_(Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 < p && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  TORCH_CHECK_NOT_IMPLEMENTED(self.scalar_type() != at::kBool,
                              "geometric_ not implemented for 'Bool'");
  at::ScalarType compute = self.scalar_type();
  if (!at::isFloatingType(compute)) {
    axon_device_info info{};
    AXON_CHECK(axon_device_get_info(self.device().index(), &info));
    compute = info.has_fp64 ? at::kDouble : at::kFloat;
  }
  return distribution_fill(self, AXON_DISTRIBUTION_GEOMETRIC, p, 0.0, gen, compute);
}

// Per-element probabilities: uniform numbers compared with p (broadcast to self), as
// bernoulli_(float) does in its kernel. Like CUDA, p outside [0, 1] is not checked (that would
// cost a device round trip): p <= 0 gives 0, p >= 1 gives 1.
Tensor& ax_bernoulli_tensor(Tensor& self, const Tensor& p, std::optional<at::Generator> gen) {
  TORCH_CHECK(at::isFloatingType(p.scalar_type()),
              "expected probabilities tensor to have floating type, got ", p.scalar_type());
  if (self.numel() == 0) return self;
  // At least float: a float16 uniform number can round up to 1, and then p = 1 would give 0.
  at::ScalarType compute = self.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  Tensor u = at::empty(self.sizes(), self.options().dtype(compute));
  u.uniform_(0.0, 1.0, gen);
  return self.copy_(at::lt(u, p.to(self.device())));
}

Tensor& ax_bernoulli_out(const Tensor& self, std::optional<at::Generator> gen, Tensor& out) {
  at::native::resize_output(out, self.sizes());
  return ax_bernoulli_tensor(out, self, gen);
}

// ---- normal with tensor parameters: standard normal numbers scaled and shifted, as ATen does.

void check_std_tensor(const Tensor& std) {
  TORCH_CHECK(!std.is_complex(), "normal expects standard deviation to be non-complex");
  // One scalar read back, as on every PyTorch device.
  TORCH_CHECK(std.numel() == 0 || std.min().ge(0).item<bool>(),
              "normal expects all elements of std >= 0.0");
}

Tensor& normal_tt_out(const Tensor& mean, const Tensor& std, std::optional<at::Generator> gen,
                      Tensor& out) {
  check_std_tensor(std);
  at::native::resize_output(out, at::infer_size(mean.sizes(), std.sizes()));
  out.normal_(0.0, 1.0, gen);
  return out.mul_(std).add_(mean);
}
Tensor normal_tt(const Tensor& mean, const Tensor& std, std::optional<at::Generator> gen) {
  Tensor out = at::empty({0}, mean.options());
  return normal_tt_out(mean, std, gen, out);
}

Tensor& normal_tf_out(const Tensor& mean, double std, std::optional<at::Generator> gen,
                      Tensor& out) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  at::native::resize_output(out, mean.sizes());
  out.normal_(0.0, std, gen);
  return out.add_(mean);
}
Tensor normal_tf(const Tensor& mean, double std, std::optional<at::Generator> gen) {
  Tensor out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  return normal_tf_out(mean, std, gen, out);
}

Tensor& normal_ft_out(double mean, const Tensor& std, std::optional<at::Generator> gen,
                      Tensor& out) {
  check_std_tensor(std);
  at::native::resize_output(out, std.sizes());
  out.normal_(0.0, 1.0, gen);
  return out.mul_(std).add_(mean);
}
Tensor normal_ft(double mean, const Tensor& std, std::optional<at::Generator> gen) {
  Tensor out = at::empty_like(std, at::MemoryFormat::Contiguous);
  return normal_ft_out(mean, std, gen, out);
}

// A random permutation: sort 64-bit random keys and keep the positions.
Tensor& ax_randperm_out(int64_t n, std::optional<at::Generator> gen, Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  at::native::resize_output(out, {n});
  if (n == 0) return out;
  c10::DeviceGuard guard(out.device());
  Tensor keys = at::empty({n}, out.options().dtype(at::kLong));
  random_int_fill(keys, 0, 0, gen);
  Tensor perm = std::get<1>(at::sort(keys, /*stable=*/true, 0, false));
  return out.copy_(perm);
}

// Without replacement: the k smallest of Exp(1) / p (an exponential race). With replacement:
// uniform numbers located in the running total of each row.
Tensor ax_multinomial(const Tensor& self, int64_t n_sample, bool replacement,
                      std::optional<at::Generator> gen) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(
      at::isFloatingType(self.scalar_type()),
      "multinomial only supports floating-point dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  int64_t n_categories = self.size(-1);
  TORCH_CHECK(replacement || n_sample <= n_categories,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  Tensor probs = self.dim() == 1 ? self.unsqueeze(0) : self;
  std::vector<int64_t> shape = {probs.size(0), n_sample};
  if (probs.numel() == 0)
    return at::empty(self.dim() == 1 ? std::vector<int64_t>{n_sample} : shape,
                     self.options().dtype(at::kLong));
  Tensor p = probs.to(at::kFloat);
  Tensor row_sums = p.sum(-1);
  Tensor positive = p.gt(0).sum(-1).min().to(at::kFloat);
  Tensor stats =
      at::stack({p.min(), row_sums.min(), p.isfinite().all().to(at::kFloat), positive}).cpu();
  TORCH_CHECK(stats[0].item<float>() >= 0 && stats[2].item<float>() == 1.0f,
              "probability tensor contains either `inf`, `nan` or element < 0");
  TORCH_CHECK(stats[1].item<float>() > 0,
              "invalid multinomial distribution (sum of probabilities <= 0)");
  TORCH_CHECK(replacement || stats[3].item<float>() >= float(n_sample),
              "invalid multinomial distribution (with "
              "replacement=False, not enough non-negative category to sample)");
  Tensor result;
  if (!replacement) {
    Tensor race = at::empty(p.sizes(), p.options());
    ax_exponential_(race, 1.0, gen);
    race.div_(p);
    result = std::get<1>(at::topk(race, n_sample, -1, /*largest=*/false, /*sorted=*/true));
  } else {
    Tensor cdf = at::cumsum(p, -1).div_(row_sums.unsqueeze(-1));
    Tensor u = at::empty(shape, p.options());
    u.uniform_(0.0, 1.0, gen);
    result = at::searchsorted(cdf, u, false, /*right=*/true).clamp_max_(n_categories - 1);
  }
  return self.dim() == 1 ? result.squeeze(0) : result;
}

Tensor& ax_multinomial_out(const Tensor& self, int64_t n_sample, bool replacement,
                           std::optional<at::Generator> gen, Tensor& out) {
  Tensor r = ax_multinomial(self, n_sample, replacement, gen);
  at::native::resize_output(out, r.sizes());
  return out.copy_(r);
}

// ---- random numbers and dropout
// --------------------------------------------------------------------

Tensor& random_fill(Tensor& self, axon_random_kind kind, double a, double b,
                    const std::optional<at::Generator>& gen) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "axon: random distributions for ", self.scalar_type(),
                              " tensors are not native yet");
  check_dtype_supported(self.scalar_type(), self.device().index());
  auto [seed, offset] = philox_reserve(gen, self.device().index(), uint64_t(self.numel()));
  axon_ew_desc d = make_ew_desc_same_shape(self, {}, true);
  d.ninputs = 0;
  AXON_CHECK(axon_random(stream_for(self), to_axon_dtype(self.scalar_type()), kind, &d, seed,
                         offset, a, b));
  return self;
}

// Complex tensors draw both parts from the real distribution, as PyTorch does: normal_ with
// std / sqrt(2) per part (so the complex variance is std^2), uniform_ in [from, to) per part.
Tensor& normal_(Tensor& self, double mean, double std, std::optional<at::Generator> gen) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (self.is_complex()) {
    Tensor parts = at::view_as_real(self);
    random_fill(parts, AXON_RANDOM_NORMAL, mean, std / std::sqrt(2.0), gen);
    return self;
  }
  return random_fill(self, AXON_RANDOM_NORMAL, mean, std, gen);
}

Tensor& uniform_(Tensor& self, double from, double to, std::optional<at::Generator> gen) {
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from,
              " > to=", to);
  if (self.is_complex()) {
    Tensor parts = at::view_as_real(self);
    random_fill(parts, AXON_RANDOM_UNIFORM, from, to, gen);
    return self;
  }
  return random_fill(self, AXON_RANDOM_UNIFORM, from, to, gen);
}

Tensor& bernoulli_float(Tensor& self, double p, std::optional<at::Generator> gen) {
  TORCH_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (at::isFloatingType(self.scalar_type()))
    return random_fill(self, AXON_RANDOM_BERNOULLI, p, 0, gen);
  Tensor f = at::empty(self.sizes(), self.options().dtype(at::kFloat));
  random_fill(f, AXON_RANDOM_BERNOULLI, p, 0, gen);
  return self.copy_(f);
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p,
                                          std::optional<bool> train) {
  if (!train.value_or(true) || p == 0)
    return {input.clone(), at::ones_like(input, input.options().dtype(at::kBool))};
  if (p == 1)
    return {at::zeros_like(input), at::zeros_like(input, input.options().dtype(at::kBool))};
  Tensor keep = at::empty_like(
      input, input.options().dtype(at::isFloatingType(input.scalar_type()) ? input.scalar_type()
                                                                           : at::kFloat));
  random_fill(keep, AXON_RANDOM_BERNOULLI, 1.0 - p, 0, std::nullopt);
  Tensor out = at::mul(input, keep).mul_(1.0 / (1.0 - p));
  return {out, keep.ne(0)};
}

// As on the CPU: the result type follows promotion (an integer gradient gives float).
Tensor native_dropout_backward(const Tensor& grad, const Tensor& mask, double scale) {
  return grad * mask * scale;
}

}  // namespace

AXON_ATEN_IMPL(m) {
  m.impl("random_", ax_random_);
  m.impl("random_.from", ax_random_from);
  m.impl("random_.to", ax_random_to);
  m.impl("exponential_", ax_exponential_);
  m.impl("cauchy_", ax_cauchy_);
  m.impl("log_normal_", ax_log_normal_);
  m.impl("geometric_", ax_geometric_);
  m.impl("bernoulli_.Tensor", ax_bernoulli_tensor);
  m.impl("bernoulli.out", ax_bernoulli_out);
  m.impl("normal.Tensor_Tensor", normal_tt);
  m.impl("normal.Tensor_Tensor_out", normal_tt_out);
  m.impl("normal.Tensor_float", normal_tf);
  m.impl("normal.Tensor_float_out", normal_tf_out);
  m.impl("normal.float_Tensor", normal_ft);
  m.impl("normal.float_Tensor_out", normal_ft_out);
  m.impl("randperm.generator_out", ax_randperm_out);
  m.impl("multinomial", ax_multinomial);
  m.impl("multinomial.out", ax_multinomial_out);
  m.impl("normal_", normal_);
  m.impl("uniform_", uniform_);
  m.impl("bernoulli_.float", bernoulli_float);
  m.impl("native_dropout", native_dropout);
  m.impl("native_dropout_backward", native_dropout_backward);
}

}  // namespace axon
