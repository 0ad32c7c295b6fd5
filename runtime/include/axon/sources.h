/* Axon runtime: what generated and user kernels need beyond axon.h: the text of Axon's kernel
 * source files (torch.compile's kernels share Axon's definitions) and the device's limits for
 * kernel authors. */
#ifndef AXON_SOURCES_H
#define AXON_SOURCES_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kernels/NAME.cl as embedded at build time (or read from AXON_KERNEL_DIR); NULL if there is
 * none. The caller frees it with free(). */
AXON_API char *axon_kernel_file_text(const char *name);

/* What a kernel author sizes vector code and work-groups by (clGetDeviceInfo): the preferred
 * and native vector widths per element type (char, short, int, long, float, double, half), and
 * the largest work-group extent per dimension. */
typedef struct axon_kernel_device_limits {
  unsigned preferred_vector_width[7], native_vector_width[7];
  size_t max_work_item_sizes[3];
} axon_kernel_device_limits;
AXON_API axon_status_t axon_kernel_device_limits_get(int device, axon_kernel_device_limits *limits);

/* The work-group size a kernel declares with reqd_work_group_size (CL_KERNEL_COMPILE_WORK_GROUP
 * _SIZE), or zeros where it declares none: a launch must then use exactly that size. */
AXON_API axon_status_t axon_kernel_required_group(axon_program_t program, const char *name,
                                                  size_t group[3]);

#ifdef __cplusplus
}
#endif

#endif
