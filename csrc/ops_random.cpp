// Integer random numbers and the distributions built on them: random_ (all forms; randint uses
// random_.from), randperm, exponential_, multinomial. Values come from the device's Philox
// generator (kernels/random.cl), so the same seed gives the same numbers.
#include <ATen/Dispatch.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <limits>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

// self = base + (64 random bits mod range); range 0 means all 2^64 values.
Tensor& random_int_fill(Tensor& self, uint64_t range, int64_t base,
                        const std::optional<at::Generator>& gen) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  auto [seed, offset] = philox_reserve(gen, self.device().index(), uint64_t(self.numel()));
  Tensor target =
      self.is_non_overlapping_and_dense() ? self : at::empty(self.sizes(), self.options());
  axon_ew_desc d = make_ew_desc_same_shape(target, {});
  d.ninputs = 0;
  AXON_CHECK(axon_random_int(stream_for(self), to_axon_dtype(self.scalar_type()), &d, seed, offset,
                             range, base));
  if (!target.is_same(self)) self.copy_(target);
  return self;
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

Tensor& ax_exponential_(Tensor& self, double lambd, std::optional<at::Generator> gen) {
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  TORCH_CHECK_NOT_IMPLEMENTED(at::isFloatingType(self.scalar_type()),
                              "exponential_ not implemented for '", self.scalar_type(), "'");
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  check_dtype_supported(self.scalar_type(), self.device().index());
  auto [seed, offset] = philox_reserve(gen, self.device().index(), uint64_t(self.numel()));
  Tensor target =
      self.is_non_overlapping_and_dense() ? self : at::empty(self.sizes(), self.options());
  axon_ew_desc d = make_ew_desc_same_shape(target, {});
  d.ninputs = 0;
  AXON_CHECK(axon_random(stream_for(self), to_axon_dtype(self.scalar_type()),
                         AXON_RANDOM_EXPONENTIAL, &d, seed, offset, lambd, 0.0));
  if (!target.is_same(self)) self.copy_(target);
  return self;
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

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("random_", ax_random_);
  m.impl("random_.from", ax_random_from);
  m.impl("random_.to", ax_random_to);
  m.impl("exponential_", ax_exponential_);
  m.impl("randperm.generator_out", ax_randperm_out);
  m.impl("multinomial", ax_multinomial);
  m.impl("multinomial.out", ax_multinomial_out);
}

}  // namespace axon
