/* Axon runtime: the text of Axon's kernel source files, for programs built from generated
 * source that share Axon's definitions (torch.compile's kernels use kernels/float_math.cl). */
#ifndef AXON_SOURCES_H
#define AXON_SOURCES_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* kernels/NAME.cl as embedded at build time (or read from AXON_KERNEL_DIR); NULL if there is
 * none. The caller frees it with free(). */
AXON_API char *axon_kernel_file_text(const char *name);

#ifdef __cplusplus
}
#endif

#endif
