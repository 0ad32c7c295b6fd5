/* The driver quirks Axon works around on a device (runtime/src/quirks.c), for code generated
 * outside the runtime (torch.compile's kernels) that must work around them too. */
#ifndef AXON_PUBLIC_QUIRKS_H
#define AXON_PUBLIC_QUIRKS_H

#include "axon/axon.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device's quirks as space-separated names into `names` ("" for none): private_struct_args,
 * loop_budget, widened_int_compare. AXON_QUIRKS=none|all applies. */
AXON_API axon_status_t axon_device_quirk_names(int device, char *names, size_t size);

#ifdef __cplusplus
}
#endif

#endif
