/* Axon runtime: selection along one dim (see axon.h for the conventions; kernels/scan.cl).
 *
 * One work-item per line copies the line into scratch and selects there, in the order PyTorch's
 * CPU kernels use, so the index chosen among equal values matches the CPU's. Lines are those of
 * axon_scan_desc; `out` and `out_index` (int64) hold one element per line (out_strides). */
#ifndef AXON_SELECT_H
#define AXON_SELECT_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The k-th smallest (0-based, NaN largest) of each line and its position: a median-of-three
 * quickselect with Hoare partitioning, as torch.kthvalue on the CPU. */
AXON_API axon_status_t axon_kthvalue(axon_stream_t stream, axon_dtype dtype,
                                     const axon_scan_desc *d, int64_t k);

/* The most frequent value of each line (the smallest among equally frequent ones) and the
 * position of its last element after an introsort of the line, as torch.mode on the CPU. */
AXON_API axon_status_t axon_mode(axon_stream_t stream, axon_dtype dtype, const axon_scan_desc *d);

#ifdef __cplusplus
}
#endif

#endif
