// Special mathematical functions: erfc, erfinv, the gamma family (lgamma, digamma, polygamma,
// mvlgamma, igamma / igammac, Hurwitz zeta), Bessel and Airy functions, normal-distribution
// helpers and the orthogonal polynomials of torch.special. Each is one kernel of
// kernels/special.cl run through the elementwise machinery (TensorIterator broadcasting, ATen
// type promotion, integer inputs computed in the default float type). Only the structured
// `.out` overloads are registered: PyTorch derives the functional and in-place forms, and its
// Scalar overloads wrap the scalar into a tensor before calling them. Gradients are PyTorch's
// formulas in terms of these same ops (digamma' = polygamma(1, x), i0' = i1, ...).
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Tensor;

Tensor& polygamma_out(int64_t n, const Tensor& self, Tensor& out) {
  TORCH_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  return unary("special/polygamma", self, out, Promote::IntToFloat, double(n));
}

// mvlgamma's functional form is composite (a sum of lgamma over shifted copies of the input,
// with its argument checks); its out= form is a CPU kernel upstream, so compose it here.
Tensor& mvlgamma_out(const Tensor& self, int64_t p, Tensor& out) {
  Tensor result = at::mvlgamma(self, p);
  TORCH_CHECK(at::canCast(result.scalar_type(), out.scalar_type()), "result type ",
              result.scalar_type(), " can't be cast to the desired output type ",
              out.scalar_type());
  at::native::resize_output(out, result.sizes());
  return out.copy_(result);
}

}  // namespace

#define SPECIAL1(name, kernel)                                       \
  m.impl(name, [](const Tensor& self, Tensor& out) -> Tensor& {      \
    return unary("special/" kernel, self, out, Promote::IntToFloat); \
  })
#define SPECIAL2(name, kernel)                                                \
  m.impl(name, [](const Tensor& a, const Tensor& b, Tensor& out) -> Tensor& { \
    return binary("special/" kernel, a, b, out, Promote::IntToFloat);         \
  })

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  // Error function and normal distribution.
  SPECIAL1("erfc.out", "erfc");
  SPECIAL1("erfinv.out", "erfinv");
  SPECIAL1("special_erfcx.out", "erfcx");
  SPECIAL1("special_ndtri.out", "ndtri");
  SPECIAL1("special_log_ndtr.out", "log_ndtr");

  // Gamma family.
  SPECIAL1("lgamma.out", "lgamma");
  SPECIAL1("digamma.out", "digamma");
  m.impl("polygamma.out", polygamma_out);
  m.impl("mvlgamma.out", mvlgamma_out);
  SPECIAL2("special_zeta.out", "zeta");
  SPECIAL2("igamma.out", "igamma");
  SPECIAL2("igammac.out", "igammac");

  // Elementary combinations.
  SPECIAL1("sinc.out", "sinc");
  SPECIAL1("special_entr.out", "entr");
  SPECIAL2("special_xlog1py.out", "xlog1py");

  // Bessel and Airy functions.
  SPECIAL1("i0.out", "i0");
  SPECIAL1("special_i0e.out", "i0e");
  SPECIAL1("special_i1.out", "i1");
  SPECIAL1("special_i1e.out", "i1e");
  SPECIAL1("special_modified_bessel_i0.out", "i0");
  SPECIAL1("special_modified_bessel_i1.out", "i1");
  SPECIAL1("special_modified_bessel_k0.out", "k0");
  SPECIAL1("special_modified_bessel_k1.out", "k1");
  SPECIAL1("special_scaled_modified_bessel_k0.out", "k0e");
  SPECIAL1("special_scaled_modified_bessel_k1.out", "k1e");
  SPECIAL1("special_bessel_j0.out", "j0");
  SPECIAL1("special_bessel_j1.out", "j1");
  SPECIAL1("special_bessel_y0.out", "y0");
  SPECIAL1("special_bessel_y1.out", "y1");
  SPECIAL1("special_spherical_bessel_j0.out", "spherical_bessel_j0");
  SPECIAL1("special_airy_ai.out", "airy_ai");

  // Orthogonal polynomials p_n(x): x first, then n.
  SPECIAL2("special_chebyshev_polynomial_t.out", "chebyshev_t");
  SPECIAL2("special_chebyshev_polynomial_u.out", "chebyshev_u");
  SPECIAL2("special_chebyshev_polynomial_v.out", "chebyshev_v");
  SPECIAL2("special_chebyshev_polynomial_w.out", "chebyshev_w");
  SPECIAL2("special_shifted_chebyshev_polynomial_t.out", "shifted_chebyshev_t");
  SPECIAL2("special_shifted_chebyshev_polynomial_u.out", "shifted_chebyshev_u");
  SPECIAL2("special_shifted_chebyshev_polynomial_v.out", "shifted_chebyshev_v");
  SPECIAL2("special_shifted_chebyshev_polynomial_w.out", "shifted_chebyshev_w");
  SPECIAL2("special_hermite_polynomial_h.out", "hermite_h");
  SPECIAL2("special_hermite_polynomial_he.out", "hermite_he");
  SPECIAL2("special_laguerre_polynomial_l.out", "laguerre_l");
  SPECIAL2("special_legendre_polynomial_p.out", "legendre_p");
}

}  // namespace axon
