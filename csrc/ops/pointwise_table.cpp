// The ATen registrations the pointwise table makes (runtime/kernels/pointwise_ops.def): every
// row whose glue column names a simple shape (an out= of one or two tensors, a comparison, a
// predicate) registers its ATen overloads here; the others (scalar parameters, modes, several
// kernels) are registered by hand in their family's file.
#include <torch/library.h>

#include <sstream>
#include <string>

#include "axon_glue.h"

namespace axon {
namespace {

using at::Scalar;
using at::Tensor;

template <axon_pointwise_op Op, Promote P>
Tensor& unary_out(const Tensor& self, Tensor& out) {
  return unary(Op, self, out, P);
}
template <axon_pointwise_op Op, Promote P>
Tensor& binary_out(const Tensor& a, const Tensor& b, Tensor& out) {
  return binary(Op, a, b, out, P);
}
template <axon_pointwise_op Op>
Tensor& compare_out(const Tensor& a, const Tensor& b, Tensor& out) {
  return compare(Op, a, b, out);
}
template <axon_pointwise_op Op>
Tensor& compare_scalar_out(const Tensor& a, const Scalar& b, Tensor& out) {
  return compare_scalar(Op, a, b, out);
}
template <axon_pointwise_op Op>
Tensor& predicate_out(const Tensor& self, Tensor& out) {
  return predicate(Op, self, out);
}

// `fn` for each overload of the space-separated list.
template <typename Fn>
void register_each(CheckedLibrary& m, const char* overloads, Fn fn) {
  std::istringstream names(overloads);
  for (std::string name; names >> name;) m.impl(name.c_str(), fn);
}

// One function per glue shape of the table's glue column: register_<shape><Op>(m, aten).
template <axon_pointwise_op Op>
void register_HAND(CheckedLibrary&, const char*) {}
#define AXON_GLUE_SHAPE(shape, fn)                             \
  template <axon_pointwise_op Op>                              \
  void register_##shape(CheckedLibrary& m, const char* aten) { \
    register_each(m, aten, fn);                                \
  }
AXON_GLUE_SHAPE(UNARY_SAME, (&unary_out<Op, Promote::Same>))
AXON_GLUE_SHAPE(UNARY_FLOAT, (&unary_out<Op, Promote::IntToFloat>))
AXON_GLUE_SHAPE(BINARY_SAME, (&binary_out<Op, Promote::Same>))
AXON_GLUE_SHAPE(BINARY_FLOAT, (&binary_out<Op, Promote::IntToFloat>))
AXON_GLUE_SHAPE(PREDICATE, (&predicate_out<Op>))
#undef AXON_GLUE_SHAPE
template <axon_pointwise_op Op>
void register_COMPARE(CheckedLibrary& m, const char* aten) {
  m.impl((std::string(aten) + ".Tensor_out").c_str(), &compare_out<Op>);
  m.impl((std::string(aten) + ".Scalar_out").c_str(), &compare_scalar_out<Op>);
}

}  // namespace

AXON_ATEN_IMPL(m) {
#define AXON_POINTWISE(name, family, arity, ff, fi, fb, out, glue, aten, inductor) \
  register_##glue<AXON_PW_##name>(m, aten);
#include "kernels/pointwise_ops.def"
#undef AXON_POINTWISE
}

}  // namespace axon
