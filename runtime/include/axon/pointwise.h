/* The pointwise ops' ids: one per row of the pointwise table (kernels/pointwise_ops.def). */
#ifndef AXON_POINTWISE_H
#define AXON_POINTWISE_H

typedef enum axon_pointwise_op {
#define AXON_POINTWISE(name, ...) AXON_PW_##name,
#include "../../kernels/pointwise_ops.def"
#undef AXON_POINTWISE
  AXON_PW_COUNT
} axon_pointwise_op;

#endif
