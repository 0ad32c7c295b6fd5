/* Axon runtime: random distributions beyond axon_random()'s basic four (see axon.h for the
 * conventions). */
#ifndef AXON_RANDOM_H
#define AXON_RANDOM_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Numbered after axon_random_kind: the kernel tells all of them apart by this number. */
typedef enum axon_distribution {
  AXON_DISTRIBUTION_CAUCHY = AXON_RANDOM_EXPONENTIAL + 1, /* median a, scale b */
  AXON_DISTRIBUTION_LOG_NORMAL,                           /* exp(normal(mean a, std b)) */
  AXON_DISTRIBUTION_GEOMETRIC /* success probability a: the trial of the first success, 1, 2 ... */
} axon_distribution;

/* Fills desc's output (operand 0, a floating dtype, any strides) as axon_random() does:
 * element i depends only on (seed, offset + i). */
AXON_API axon_status_t axon_random_distribution(axon_stream_t stream, axon_dtype dtype,
                                                axon_distribution kind, const axon_ew_desc *desc,
                                                uint64_t seed, uint64_t offset, double a, double b);

#ifdef __cplusplus
}
#endif

#endif
